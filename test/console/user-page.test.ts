import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformGrants } from "../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { createProject, projectClient } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { gitlabIdp, linkAccount } from "../users/idp-links.js";
import { createOrg, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner } from "./helpers.js";

/*
 * The user's page in the console (console/src/pages/User.tsx and pages/user/) in headless
 * Chromium, as an instance owner uses it, each change checked through the API: a person's
 * metadata set, changed and removed (a binary value shown as such), a grant of a project's
 * role added and removed, their memberships listed, a session (made through the API) ended,
 * a linked external account (made as an external login makes it) removed; a service
 * account's key generated (its key file shown once and downloaded), then deleted.
 */

const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`a user's page in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;
  let users: Users;
  const person = { id: "", username: uniqueName("ada") };
  const robot = { id: "", username: uniqueName("robot") };
  const project = { id: "", name: uniqueName("Ledger") };
  const org = { id: "", name: uniqueName("Guild") };
  const link = { idpId: "", externalUserId: uniqueName("ext"), username: uniqueName("ada-at-gitlab") };
  let sessionId: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" }),
      launchChromium(),
    ]);
    admin = await instanceOwner(server, "root");
    users = new Users(server);
    person.id = await users.create(humanUser(person.username, {}, { givenName: "Ada", familyName: "Lovelace" }));
    robot.id = await users.create(machineUser(robot.username, { name: "Nightly build" }));
    project.id = await createProject(server.baseUrl, server.adminToken, project.name);
    await projectClient(server.baseUrl, server.adminToken).ok("AddProjectRole", { projectId: project.id, role: { key: "editor", displayName: "Editor" } });
    org.id = (await createOrg(server, org.name)).id;
    const memberships = protocolClient(PlatformMemberships, "grpc", server.baseUrl);
    ok(await memberships.call("CreateMembership", { membership: { userId: person.id, roles: ["IAM_OWNER_VIEWER"] } }, server.adminToken));
    ok(await memberships.call("CreateMembership", { membership: { userId: person.id, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } }, server.adminToken));
    // The console cannot make these: a session (a login UI's), a link (an external login's), a binary value.
    const session = ok(
      await protocolClient(PlatformSessions, "grpc", server.baseUrl).call(
        "CreateSession",
        { checks: { user: { userId: person.id } }, userAgent: { description: "Test browser 1.0", ip: "192.0.2.7" } },
        server.adminToken,
      ),
    );
    sessionId = session.sessionId as string;
    link.idpId = await gitlabIdp(server.baseUrl, server.adminToken, "Guild GitLab");
    await linkAccount(server, server.instanceId, person.id, {
      idpId: link.idpId,
      externalUserId: link.externalUserId,
      username: link.username,
      email: `${link.username}@mail.example`,
    });
    ok(await users.call("SetMetadata", { id: person.id, metadata: [{ key: "badge", value: Buffer.from([0xff, 0xfe, 0x00]).toString("base64") }] }));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);

  /** A tab of its own, signed in as the instance owner, on a user's page. */
  async function userPage(userId: string, heading: string): Promise<Tab> {
    const tab = await openTab(browser, await browser.newContext({ locale: "en-US", acceptDownloads: true }));
    const { page } = tab;
    await page.goto(`${server.baseUrl}/ui/console/users/${userId}`);
    await page.getByLabel(en.loginName).fill(admin);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(CONSOLE_PASSWORD);
    await page.getByRole("button", { name: en.signIn }).click();
    await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
    return tab;
  }

  const section = (page: Page, name: string) => page.getByRole("region", { name, exact: true });
  const metadata = async () =>
    Object.fromEntries(
      ((ok(await users.call("SearchMetadata", { id: person.id })).result ?? []) as { key: string; value: string }[]).map((m) => [
        m.key,
        Buffer.from(m.value, "base64").toString("utf8"),
      ]),
    );
  const grants = async () =>
    ok(
      await protocolClient(PlatformGrants, "grpc", server.baseUrl).call(
        "SearchUserGrants",
        { filters: [{ userId: { userId: person.id } }] },
        server.adminToken,
      ),
    ).result ?? [];

  it("a person's metadata, grant, memberships, session and linked account", async () => {
    const tab = await userPage(person.id, "Ada Lovelace");
    const { page } = tab;
    try {
      const sessions = section(page, "Sessions");
      await sessions.getByRole("row").filter({ hasText: "Test browser 1.0" }).waitFor();
      expect(await sessions.getByRole("row").filter({ hasText: "Test browser 1.0" }).innerText()).toContain("192.0.2.7");
      const memberships = section(page, "Memberships");
      await expect
        .poll(async () =>
          (await memberships.getByRole("row").allInnerTexts())
            .slice(1)
            .map((r) => r.replace(/\s+/g, " ").trim())
            .sort(),
        )
        .toEqual([`Instance IAM_OWNER_VIEWER Change roles Remove…`, `Organization ${org.name} ORG_OWNER Change roles Remove…`]);
      expect(await memberships.getByRole("link", { name: `Organization ${org.name}` }).getAttribute("href")).toContain(`org=${org.id}`);
      const meta = section(page, "Metadata");
      await meta.getByRole("row", { name: "badge" }).getByText("Binary, 3 bytes").waitFor();
      const links = section(page, "External accounts");
      await links.getByRole("rowheader", { name: "Guild GitLab" }).waitFor();
      await inspect("user-page-person", tab);

      // Metadata: the proto's limits said before the API is asked; set, changed, removed.
      const setKey = meta.getByRole("form", { name: "Set a key" });
      await setKey.getByRole("button", { name: "Set key" }).click();
      await setKey.getByText("Give a key.").waitFor();
      await setKey.getByLabel("Key").fill("k".repeat(201));
      await setKey.getByLabel("Value").fill("platform");
      await setKey.getByRole("button", { name: "Set key" }).click();
      await setKey.getByText("A key has at most 200 characters.").waitFor();
      await setKey.getByLabel("Key").fill("team");
      await setKey.getByRole("button", { name: "Set key" }).click();
      await meta.getByRole("row", { name: "team" }).getByText("platform").waitFor();
      expect(await metadata()).toMatchObject({ team: "platform" });
      await meta.getByRole("row", { name: "team" }).getByRole("button", { name: "Change…" }).click();
      const change = page.getByRole("dialog", { name: "Change team" });
      await change.getByLabel("Value").fill("identity ✓");
      await change.getByRole("button", { name: "Save" }).click();
      await meta.getByRole("row", { name: "team" }).getByText("identity ✓").waitFor();
      expect(await metadata()).toMatchObject({ team: "identity ✓" });
      await meta.getByRole("button", { name: "Remove the key team" }).click();
      await meta.getByRole("row", { name: "team" }).waitFor({ state: "detached" });
      expect(Object.keys(await metadata())).toEqual(["badge"]);

      // A grant: the project found by name, its role ticked; then removed.
      const grantsSection = section(page, "Grants");
      await grantsSection.getByRole("button", { name: "Add a grant" }).click();
      const add = page.getByRole("dialog", { name: "Add a grant" });
      await add.getByRole("button", { name: "Grant" }).click();
      await add.getByText("Choose one of the projects found.").waitFor();
      await add.getByLabel("Find a project by name").fill(project.name.slice(0, -2));
      await add.getByText(project.name, { exact: true }).click();
      await add.getByText("Editor (editor)").click();
      await add.getByRole("button", { name: "Grant" }).click();
      await grantsSection.getByRole("row", { name: project.name }).getByText("editor").waitFor();
      expect((await grants()).map((g: { projectId: string; grant: { roleKeys: string[] } }) => [g.projectId, g.grant.roleKeys])).toEqual([
        [project.id, ["editor"]],
      ]);
      await grantsSection.getByRole("button", { name: `Remove the grant on ${project.name}` }).click();
      await grantsSection.getByText("No roles of any project.").waitFor();
      expect(await grants()).toEqual([]);

      // The session ended, the link removed.
      await sessions.getByRole("button", { name: `End the session ${sessionId}` }).click();
      await sessions.getByText("No sessions.").waitFor();
      const left = ok(
        await protocolClient(PlatformSessions, "grpc", server.baseUrl).call("SearchSessions", { filters: [{ userId: person.id }] }, server.adminToken),
      );
      expect(left.result ?? []).toEqual([]);
      await links.getByRole("button", { name: `Remove the link to ${link.username} at Guild GitLab` }).click();
      await links.getByText("No linked accounts.").waitFor();
      expect(ok(await users.call("ListIDPLinks", { id: person.id })).result ?? []).toEqual([]);
      expect(tab.errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it("a service account's key: its key file shown once and downloaded, then the key deleted", async () => {
    const tab = await userPage(robot.id, "Nightly build");
    const { page } = tab;
    try {
      const keys = section(page, "Keys");
      await keys.getByText("No keys: the account cannot sign JWT assertions until it has one.").waitFor();
      await keys.getByText("EC, P-256 (ES256)").click();
      await keys.getByRole("button", { name: "Generate a key" }).click();
      const shown = await keys.getByRole("textbox", { name: "Key file" }).inputValue();
      const keyFile = JSON.parse(shown) as { type: string; keyId: string; key: string; userId: string };
      expect(keyFile).toMatchObject({ type: "serviceaccount", userId: robot.id, key: expect.stringContaining("PRIVATE KEY") });
      const [download] = await Promise.all([page.waitForEvent("download"), keys.getByRole("link", { name: `Download ${keyFile.keyId}.json` }).click()]);
      expect(download.suggestedFilename()).toBe(`${keyFile.keyId}.json`);
      expect(await readFile(await download.path(), "utf8")).toBe(shown);
      const row = keys.getByRole("row", { name: keyFile.keyId });
      // Exact: a key ID is hex, and "EC" would match inside it.
      await row.getByRole("gridcell", { name: "EC", exact: true }).waitFor();
      const listed = ok(await users.call("SearchKeys", { id: robot.id })).result as { details: { id: string }; type: string }[];
      expect(listed.map((k) => [k.details.id, k.type])).toEqual([[keyFile.keyId, "KEY_TYPE_EC"]]);
      await inspect("user-page-service-account", tab);

      await keys.getByRole("button", { name: `Remove the key ${keyFile.keyId}` }).click();
      await row.waitFor({ state: "detached" });
      expect(ok(await users.call("SearchKeys", { id: robot.id })).result ?? []).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 90_000);
});
