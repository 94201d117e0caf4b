import type { Page } from "playwright-core";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { TEXTS } from "../../src/oidc/login/texts/index.js";
import { protocolClient } from "../support/clients.js";
import type { TestServer } from "../support/server.js";
import { humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/** The password of every person the console's tests sign in as. */
export const CONSOLE_PASSWORD = "Console-Pa55word!";

/** A person with a password who owns the instance (IAM_OWNER), made through the API; returns the login name. `human`: more of the person's fields. */
export async function instanceOwner(server: TestServer, prefix: string, human: object = {}): Promise<string> {
  const name = uniqueName(prefix);
  const id = await new Users(server).create(humanUser(name, { password: CONSOLE_PASSWORD, ...human }));
  ok(await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call("CreateMembership", { membership: { userId: id, roles: ["IAM_OWNER"] } }, server.adminToken));
  return name;
}

/** Opens the console and signs in through the login pages as `loginName` (with CONSOLE_PASSWORD), up to its home page. */
export async function signInToConsole(page: Page, server: TestServer, loginName: string): Promise<void> {
  const en = TEXTS.en;
  await page.goto(`${server.baseUrl}/ui/console/`);
  await page.getByLabel(en.loginName).fill(loginName);
  await page.getByRole("button", { name: en.next }).click();
  await page.getByLabel(en.password).fill(CONSOLE_PASSWORD);
  await page.getByRole("button", { name: en.signIn }).click();
  await page.getByRole("heading", { name: "Home" }).waitFor();
}
