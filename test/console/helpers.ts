import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import type { DatabaseTarget } from "../../src/store/database.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { inspectPage, type Tab } from "../support/page-checks.js";
import type { TestServer } from "../support/server.js";
import { humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/** The password of every person the console's tests sign in as. */
export const CONSOLE_PASSWORD = "Console-Pa55word!";

/** A person with a password who owns the instance (IAM_OWNER), made through the API; returns the login name. `human`: more of the person's fields. */
export async function instanceOwner(server: TestServer, prefix: string, human: object = {}): Promise<string> {
  const name = uniqueName(prefix);
  const id = await new Users(server).create(humanUser(name, { password: CONSOLE_PASSWORD, ...human }));
  ok(
    await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
      "CreateMembership",
      { membership: { userId: id, roles: ["IAM_OWNER"] } },
      server.adminToken,
    ),
  );
  return name;
}

/** Signs `loginName` in to the console through the login pages, as a person does, and waits for the home page. */
export async function signInToConsole(page: Page, server: TestServer, loginName: string): Promise<void> {
  await page.goto(`${server.baseUrl}/ui/console/`);
  await page.getByLabel(TEXTS.en.loginName).fill(loginName);
  await page.getByRole("button", { name: TEXTS.en.next }).click();
  await page.getByLabel(TEXTS.en.password).fill(CONSOLE_PASSWORD);
  await page.getByRole("button", { name: TEXTS.en.signIn }).click();
  await page.getByRole("heading", { name: "Home" }).waitFor();
}

const SHOTS = join(process.cwd(), "test-results", "screenshots", "console");

/**
 * The console's pages checked as inspectPage does (axe in both modes, 375 px, no console
 * error) and photographed at 1280 and 375 px on the first database kind; on the other, for
 * console errors only: a page looks the same on either. `waitFor`: "load" for a page that holds a stream open (the audit log's
 * live updates), whose network never goes idle; its test waits for what it shows instead.
 */
export function consoleInspector(kind: DatabaseTarget["kind"]): (name: string, tab: Tab, waitFor?: "load" | "networkidle") => Promise<void> {
  const looks = kind === DATABASE_KINDS[0];
  return async (name, tab, waitFor = "networkidle") => {
    if (looks) await mkdir(SHOTS, { recursive: true });
    await inspectPage(name, tab, { shots: SHOTS, widths: [1280, 375], narrow: 375, waitFor, looks });
  };
}
