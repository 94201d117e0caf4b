import type { ExternalAccount } from "../../src/domain/user/external-identities.js";
import { linkExternalAccount } from "../../src/domain/user/external-identities.js";
import { gitlab, idpClient } from "../idps/helpers.js";
import type { TestServer } from "../support/server.js";

/**
 * Links of users to accounts at identity providers. Only an external login makes one
 * (test/oidc/external-github.test.ts goes through it); the API tests make them as it does,
 * with its command.
 */
export async function linkAccount(server: TestServer, instanceId: string, userId: string, account: ExternalAccount): Promise<void> {
  await server.service.store.db.transaction().execute((tx) => linkExternalAccount(tx, { instanceId, userId: "test" }, userId, account));
}

/** A GitLab provider of the instance behind `baseUrl` (nothing is called upstream): its id. */
export async function gitlabIdp(baseUrl: string, token: string, name: string): Promise<string> {
  const made = await idpClient(baseUrl, token).ok("CreateGitLabIDP", { idp: gitlab(name) });
  return made.details.id as string;
}
