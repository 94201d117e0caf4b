import { expect } from "vitest";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import type { FakeGitHub } from "../oidc/fake-github.js";
import { humanUser, uniqueName } from "../users/helpers.js";
import { linkAccount } from "../users/idp-links.js";
import type { Flow } from "./flow.js";

const SUCCESS = "https://login.example/ui/idp/success";
const FAILURE = "https://login.example/ui/idp/failure";

/**
 * External logins through GitHub (a fake one) for a login UI: an intent that succeeds and
 * signs a linked person in with a session (the link is deleted afterwards), and one whose
 * provider answers an error.
 */
export async function intentFlows(f: Flow, ui: string, github: FakeGitHub): Promise<void> {
  f.keep(github.clientSecret);
  const idp = await f.ok(PlatformIdentityProviders, "CreateGitHubIDP", {
    idp: { idp: { name: "GitHub" }, config: { clientId: github.clientId, clientSecret: github.clientSecret } },
  });
  const idpId = idp.details.id as string;
  const start = () => f.ok(PlatformIDPIntents, "StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE }, ui);

  const login = uniqueName("octo");
  github.account = {
    profile: { id: 4242, login, name: "Octo Cat", email: null },
    emails: [{ email: `${login}@mail.example`, primary: true, verified: true, visibility: "private" }],
  };
  const userId = (await f.ok(PlatformUsers, "CreateUser", { user: humanUser(login) })).details.id as string;
  await linkAccount(f.server, f.server.instanceId, userId, { idpId, externalUserId: "4242", username: login, email: "" });
  const atGitHub = await fetch((await start()).authUrl, { redirect: "manual" });
  const succeeded = await callback(atGitHub.headers.get("location")!);
  const intentToken = succeeded.searchParams.get("token")!;
  f.keep(intentToken);
  await f.ok(PlatformSessions, "CreateSession", { checks: { idpIntent: { idpIntentId: succeeded.searchParams.get("id"), idpIntentToken: intentToken } } }, ui);
  await f.ok(PlatformUsers, "DeleteIDPLink", { id: userId, idpId, externalUserId: "4242" });

  const state = new URL((await start()).authUrl).searchParams.get("state");
  const failed = await callback(`${f.server.baseUrl}/ui/login/idp/callback?state=${state}&error=access_denied`);
  expect(failed.origin + failed.pathname).toBe(FAILURE);
}

/** The service's callback, as the browser follows it: where it sends the browser. */
async function callback(url: string): Promise<URL> {
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status, await res.clone().text()).toBe(303);
  return new URL(res.headers.get("location")!);
}
