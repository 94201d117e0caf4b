import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Browser, Locator, Page } from "playwright-core";
import { consoleInspector } from "./helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { at } from "../instances/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * The console's administrators and instances (console/src/pages/Administrators.tsx,
 * Instances.tsx, Instance.tsx) in headless Chromium, as a person who owns the instance and
 * the system uses them: the instance's and the system's administrators, filtered by role; a
 * person given roles in an organization chosen in the switcher, their roles changed, then
 * removed; an instance created with its first administrator's token (shown once, then used),
 * its domains, name and limits, blocked and unblocked, deleted; the instance one is in
 * refused deletion in the API's words. The pages are checked as test/console/console.test.ts
 * checks them.
 */

const PASSWORD = "Console-Pa55word!";
const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(
  `the console's administrators and instances on %s (skipped when ${CHROMIUM} is missing)`,
  (kind) => {
    let server: TestServer;
    let browser: Browser;
    const owner = { id: "", loginName: "" };
    const other = { id: "", loginName: "", username: uniqueName("grace") };
    const org = { id: "", name: uniqueName("Agency") };

    beforeAll(async () => {
      [server, browser] = await Promise.all([
        startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" }),
        launchChromium(),
      ]);
      const users = new Users(server);
      const memberships = protocolClient(PlatformMemberships, "grpc", server.baseUrl);
      owner.id = await users.create(humanUser(uniqueName("owner"), { password: PASSWORD }));
      owner.loginName = (await users.get(owner.id)).loginName as string;
      ok(await memberships.call("CreateMembership", { membership: { userId: owner.id, roles: ["IAM_OWNER"] } }, server.adminToken));
      ok(await memberships.call("CreateMembership", { membership: { userId: owner.id, roles: ["SYSTEM_OWNER"] }, ctx: { system: true } }, server.adminToken));
      other.id = await users.create(humanUser(other.username, { password: PASSWORD }));
      other.loginName = (await users.get(other.id)).loginName as string;
      org.id = (await createOrg(server, org.name)).id;
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    const inspect = consoleInspector(kind);

    /** A tab of its own, signed in to the console as the owner, on its home page. */
    async function signedIn(): Promise<Tab> {
      const tab = await openTab(browser);
      const { page } = tab;
      await page.goto(`${server.baseUrl}/ui/console/`);
      await page.getByLabel(en.loginName).fill(owner.loginName);
      await page.getByRole("button", { name: en.next }).click();
      await page.getByLabel(en.password).fill(PASSWORD);
      await page.getByRole("button", { name: en.signIn }).click();
      await page.getByRole("heading", { name: "Home" }).waitFor();
      return tab;
    }

    /** A check box or radio button toggled as a person at the keyboard does: focused, then Space. */
    async function toggle(box: Locator, checked: boolean) {
      await box.focus();
      await box.page().keyboard.press("Space");
      await expect(box.isChecked()).resolves.toBe(checked);
    }

    /** An option of a select field (React Aria's Select: a button named by its label), chosen by keyboard. */
    async function choose(page: Page, label: string, option: string) {
      await page.getByRole("button", { name: new RegExp(`${label}$`) }).press("Enter");
      await page.getByRole("option", { name: option, exact: true }).press("Enter");
      await page.getByRole("listbox").waitFor({ state: "hidden" });
    }

    const rolesOf = async (userId: string, ctx: JsonObject) => {
      const found = ok(
        await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
          "SearchMemberships",
          { ctx, filters: [{ user: { userId } }] },
          server.adminToken,
        ),
      );
      return (found.result?.[0]?.roles as string[] | undefined) ?? [];
    };
    const instanceById = (id: string) => protocolClient(PlatformInstances, "grpc", server.baseUrl).call("GetInstance", { id }, server.adminToken);

    it("lists the instance's and the system's administrators by role; gives a person roles in an organization, changes and removes them", async () => {
      const tab = await signedIn();
      const { page } = tab;
      try {
        await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Administrators" }).click();
        await page.getByRole("heading", { name: "Administrators" }).waitFor();
        // The bootstrap's person and machine user, by login name, beside the owner.
        await page.getByRole("rowheader", { name: /^admin@/ }).waitFor();
        await page.getByRole("rowheader", { name: /^platform-admin@/ }).waitFor();
        await expect(page.getByRole("row", { name: owner.loginName }).innerText()).resolves.toMatch(/Given Family\s+IAM_OWNER/);
        await inspect("administrators", tab);

        await choose(page, "Role", "IAM_OWNER_VIEWER");
        await page.getByText("No administrator matches.").waitFor();
        await choose(page, "Role", "IAM_OWNER");
        await page.getByRole("rowheader", { name: owner.loginName }).waitFor();
        await choose(page, "Where", "System (every instance)");
        await expect.poll(() => page.getByRole("row", { name: owner.loginName }).innerText()).toContain("SYSTEM_OWNER");
        await page.getByRole("rowheader", { name: /^platform-admin@/ }).waitFor();

        // An organization chosen in the switcher: its administrators, none yet.
        await page.getByRole("combobox", { name: "Organization" }).fill(org.name);
        await page.getByRole("option", { name: org.name }).click();
        await page.waitForURL((u) => u.searchParams.get("org") === org.id);
        await page.getByText("No administrator matches.").waitFor();

        await page.getByRole("button", { name: "Add an administrator" }).click();
        const add = page.getByRole("dialog", { name: "Add an administrator" });
        await add.getByRole("button", { name: "Add", exact: true }).click();
        await expect(add.getByRole("alert").innerText()).resolves.toBe("Choose one of the users found.");
        await add.getByRole("searchbox", { name: "Find by login name" }).fill(other.username);
        await toggle(add.getByRole("radio", { name: `${other.loginName} (Given Family)` }), true);
        await expect(add.getByRole("alert").innerText()).resolves.toBe("Choose at least one role.");
        await toggle(add.getByRole("checkbox", { name: "ORG_OWNER", exact: true }), true);
        await expect(add.getByRole("alert").count()).resolves.toBe(0);
        await inspect("administrator-add", tab);
        await add.getByRole("button", { name: "Add", exact: true }).click();
        const row = page.getByRole("row", { name: other.loginName });
        await expect.poll(() => row.innerText()).toMatch(/ORG_OWNER\b/);
        expect(await rolesOf(other.id, { orgId: org.id })).toEqual(["ORG_OWNER"]);

        // Twice is refused, in the API's words.
        await page.getByRole("button", { name: "Add an administrator" }).click();
        await add.getByRole("searchbox", { name: "Find by login name" }).fill(other.username);
        await toggle(add.getByRole("radio", { name: `${other.loginName} (Given Family)` }), true);
        await toggle(add.getByRole("checkbox", { name: "ORG_OWNER_VIEWER" }), true);
        await add.getByRole("button", { name: "Add", exact: true }).click();
        await expect(add.getByRole("alert").innerText()).resolves.toContain("already a member");
        await add.getByRole("button", { name: "Cancel" }).click();

        await row.getByRole("button", { name: "Change roles" }).click();
        const change = page.getByRole("dialog", { name: `Roles of ${other.loginName}` });
        await toggle(change.getByRole("checkbox", { name: "ORG_OWNER", exact: true }), false);
        await toggle(change.getByRole("checkbox", { name: "ORG_OWNER_VIEWER" }), true);
        await change.getByRole("button", { name: "Save" }).click();
        await expect.poll(() => rolesOf(other.id, { orgId: org.id })).toEqual(["ORG_OWNER_VIEWER"]);
        await expect.poll(() => row.innerText()).toContain("ORG_OWNER_VIEWER");

        await row.getByRole("button", { name: "Remove…" }).click();
        await page.getByRole("alertdialog").getByRole("button", { name: "Remove", exact: true }).click();
        await page.getByText("No administrator matches.").waitFor();
        expect(await rolesOf(other.id, { orgId: org.id })).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);

    it("creates an instance whose administrator's token works; its domains, name and limits; blocks, unblocks and deletes it; refuses to delete its own", async () => {
      const tab = await signedIn();
      const { page } = tab;
      const port = Number(new URL(server.baseUrl).port);
      const suffix = randomBytes(4).toString("hex");
      const [first, second] = [`x-${suffix}.localhost`, `y-${suffix}.localhost`];
      const name = uniqueName("Tenant");
      try {
        await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Instances" }).click();
        await page.getByRole("heading", { name: "Instances" }).waitFor();
        await page.getByRole("rowheader", { name: "Default" }).waitFor();
        await inspect("instances", tab);

        await page.getByRole("button", { name: "New instance" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByLabel("Name", { exact: true }).fill(name);
        await dialog.getByLabel("Domains").fill(first);
        await dialog.getByLabel("First organization").fill("Tenant HQ");
        await dialog.getByLabel("Username").fill("boss");
        await dialog.getByLabel("Given name").fill("Ada");
        await dialog.getByLabel("Family name").fill("Lovelace");
        await dialog.getByLabel("Email").fill("boss@mail.example");
        await dialog.getByLabel("Password").fill(PASSWORD);
        await toggle(dialog.getByRole("checkbox", { name: "Also a personal access token for the API" }), true);
        await inspect("instance-new", tab);
        await dialog.getByRole("button", { name: "Create" }).click();
        await dialog.getByRole("heading", { name: "Instance created" }).waitFor();
        const token = await dialog.getByRole("textbox", { name: "Administrator's token" }).inputValue();
        // The token, read from the page, works on the new instance's domain.
        const mine = ok(await at(PlatformMemberships, "connect", first, port).call("ListMyPermissions", {}, token));
        expect(mine.permissions).toContain("instance.write");
        await dialog.getByRole("link", { name: "Open the instance" }).click();
        await page.getByRole("heading", { name, level: 1 }).waitFor();
        await inspect("instance", tab);

        const domains = page.getByRole("form", { name: "Add a domain" });
        await domains.getByLabel("Domain").fill(second);
        await domains.getByRole("button", { name: "Add domain" }).click();
        await page.getByRole("button", { name: `Make ${second} primary` }).click();
        await page.getByRole("button", { name: `Remove ${first}` }).click();
        await page.getByRole("rowheader", { name: first }).waitFor({ state: "detached" });
        await expect(page.getByRole("rowheader", { name: second }).innerText()).resolves.toContain("Primary");

        const settings = page.getByRole("region", { name: "Settings" });
        await settings.getByLabel("Name").fill(`${name} v2`);
        await settings.getByRole("button", { name: "Save" }).click();
        await page.getByRole("heading", { name: `${name} v2`, level: 1 }).waitFor();
        const limits = page.getByRole("region", { name: "Limits" });
        await limits.getByLabel("Keep audit events listed for (days)").fill("30");
        await limits.getByRole("button", { name: "Save limits" }).click();
        await page.getByText("For 30 days").waitFor();

        const created = ok(await instanceById(new URL(page.url()).pathname.split("/").pop()!)).instance;
        expect(created).toMatchObject({ name: `${name} v2`, domains: [{ domain: second, isPrimary: true }], auditLogRetention: "2592000s" });

        await page.getByRole("button", { name: "Block", exact: true }).click();
        await page.getByText("Blocked", { exact: true }).waitFor();
        expect(ok(await instanceById(created.details.id)).instance.state).toBe("INSTANCE_STATE_BLOCKED");
        expect(await at(PlatformMemberships, "connect", second, port).call("ListMyPermissions", {}, token)).toMatchObject({
          ok: false,
          code: Code.ResourceExhausted,
        });
        await page.getByRole("button", { name: "Unblock" }).click();
        await page.getByText("Active", { exact: true }).waitFor();
        expect(ok(await instanceById(created.details.id)).instance.state).toBe("INSTANCE_STATE_ACTIVE");

        await page.getByRole("button", { name: "Delete…" }).click();
        await page.getByRole("alertdialog").getByRole("button", { name: "Delete the instance" }).click();
        await page.getByRole("heading", { name: "Instances", level: 1 }).waitFor();
        expect(await instanceById(created.details.id)).toMatchObject({ ok: false, code: Code.NotFound });

        // The instance the console runs in: the service refuses, and the page says so in its words.
        await page.getByRole("searchbox", { name: "Find" }).fill("Default");
        await page.getByRole("rowheader", { name: "Default" }).getByRole("link").click();
        await page.getByRole("heading", { name: "Default", level: 1 }).waitFor();
        await page.getByRole("button", { name: "Delete…" }).click();
        await page.getByRole("alertdialog").getByRole("button", { name: "Delete the instance" }).click();
        await expect(page.getByRole("alertdialog").getByRole("alert").innerText()).resolves.toContain("cannot be deleted");
      } finally {
        await page.context().close();
      }
    }, 120_000);
  },
);
