import { existsSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { clients, createMachineUser, createOrg, createProject, type Clients } from "../grants/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { uniqueName } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner } from "./helpers.js";

/*
 * A project's grants to other organizations on its page in the console
 * (console/src/pages/project/ProjectGrants.tsx) in headless Chromium, as an instance owner
 * uses them, each step checked through the API: the project granted to an organization found
 * by name (its own not offered), with one of its roles; a deactivated organization refused in
 * the API's words under the form; the grant's roles changed (the user grant its organization
 * made under it, marked so among the user grants, loses the role taken away), deactivated
 * and reactivated; a role removed from the project gone from its row at once; the grant
 * removed with what was made under it.
 */

const en = TEXTS.en;
const ACTIVE = "PROJECT_GRANT_STATE_ACTIVE";
const INACTIVE = "PROJECT_GRANT_STATE_INACTIVE";

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`a project's grants in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let api: Clients;
  let owner: string;
  const maker = { id: "", name: uniqueName("Maker") };
  const partner = { id: "", name: uniqueName("Partner") };
  const dormant = { id: "", name: uniqueName("Dormant") };
  const project = { id: "", name: uniqueName("Catalog") };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" }),
      launchChromium(),
    ]);
    api = clients(server.baseUrl, server.adminToken);
    owner = await instanceOwner(server, "root");
    for (const org of [maker, partner, dormant]) org.id = await createOrg(api, org.name);
    await api.orgs.ok("DeactivateOrganization", { id: dormant.id });
    project.id = await createProject(api, maker.id, ["reader", "writer"], project.name);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);

  /** The project's grants as the API answers them. */
  async function grantsOfProject() {
    const found = await api.grants.ok("SearchProjectGrants", { filters: [{ projectId: { projectId: project.id } }] });
    return ((found.result ?? []) as { details: { id: string }; grantedOrgId: string; roleKeys?: string[]; state: string }[]).map((g) => ({
      id: g.details.id,
      grantedOrgId: g.grantedOrgId,
      roleKeys: g.roleKeys ?? [],
      state: g.state,
    }));
  }

  /** A check box toggled as a person at the keyboard does: focused, then Space. */
  async function toggle(box: Locator, checked: boolean) {
    await box.focus();
    await box.page().keyboard.press("Space");
    await expect(box.isChecked()).resolves.toBe(checked);
  }

  async function projectPage(): Promise<Tab> {
    const tab = await openTab(browser);
    const { page } = tab;
    await page.goto(`${server.baseUrl}/ui/console/projects/${project.id}`);
    await page.getByLabel(en.loginName).fill(owner);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(CONSOLE_PASSWORD);
    await page.getByRole("button", { name: en.signIn }).click();
    await page.getByRole("heading", { name: project.name, level: 1 }).waitFor();
    return tab;
  }

  const region = (page: Page, name: string) => page.getByRole("region", { name, exact: true });

  it("grants the project to an organization, refuses a deactivated one in the API's words, changes the grant's roles, deactivates, reactivates and removes it", async () => {
    const tab = await projectPage();
    const { page } = tab;
    try {
      const grants = region(page, "Project grants");
      await grants.getByText("The project is granted to no other organization.").waitFor();

      // Granted: nothing chosen is said so; the project's own organization is not offered.
      await grants.getByRole("button", { name: "Grant to an organization" }).click();
      const add = page.getByRole("dialog", { name: "Grant to an organization" });
      await add.getByRole("button", { name: "Grant", exact: true }).click();
      await expect(add.getByRole("alert").innerText()).resolves.toBe("Choose one of the organizations found.");
      await add.getByRole("searchbox", { name: "Find an organization by name" }).fill(maker.name);
      await add.getByText("No other organization matches.").waitFor();
      await add.getByRole("searchbox", { name: "Find an organization by name" }).fill(partner.name);
      await toggle(add.getByRole("radio", { name: partner.name }), true);
      await expect(add.getByRole("alert").innerText()).resolves.toBe("Choose at least one role.");
      await toggle(add.getByRole("checkbox", { name: "Role reader (reader)" }), true);
      await expect(add.getByRole("alert").count()).resolves.toBe(0);
      await inspect("project-grant-add", tab);
      await add.getByRole("button", { name: "Grant", exact: true }).click();
      const row = grants.getByRole("row", { name: partner.name });
      await expect.poll(() => row.innerText()).toMatch(/reader\s+Active/);
      const [made] = await grantsOfProject();
      expect(await grantsOfProject()).toEqual([{ id: made!.id, grantedOrgId: partner.id, roleKeys: ["reader"], state: ACTIVE }]);

      // A deactivated organization: the API refuses, and the form says so in its words.
      await grants.getByRole("button", { name: "Grant to an organization" }).click();
      await add.getByRole("searchbox", { name: "Find an organization by name" }).fill(dormant.name);
      await toggle(add.getByRole("radio", { name: dormant.name }), true);
      await toggle(add.getByRole("checkbox", { name: "Role writer (writer)" }), true);
      await add.getByRole("button", { name: "Grant", exact: true }).click();
      await expect.poll(() => add.getByRole("alert").innerText()).toBe(`organization ${dormant.id} is deactivated; reactivate it first`);
      await add.getByRole("button", { name: "Cancel" }).click();
      await add.waitFor({ state: "detached" });
      expect((await grantsOfProject()).map((g) => g.grantedOrgId)).toEqual([partner.id]);

      // The partner gives one of its users the grant's role (the console of the partner's owners is not this page).
      const userId = await createMachineUser(api, partner.id);
      const loginName = (await api.users.ok("GetUser", { id: userId })).user.loginName as string;
      const userGrantId = (
        await api.grants.ok("CreateUserGrant", { projectId: project.id, ctx: { orgId: partner.id }, grant: { userId, roleKeys: ["reader"] } })
      ).details.id as string;
      expect((await api.grants.ok("GetUserGrant", { id: userGrantId })).grant.projectGrantId).toBe(made!.id);
      await page.reload();
      const userGrant = region(page, "User grants").getByRole("row", { name: loginName });
      await expect.poll(() => userGrant.innerText()).toMatch(/Project grant\s+reader/);
      await inspect("project-grants", tab);

      // Its roles changed: reader taken away (the user grant made under it loses it too), writer given.
      await row.getByRole("button", { name: "Change roles" }).click();
      const change = page.getByRole("dialog", { name: `Roles of the grant to ${partner.name}` });
      await toggle(change.getByRole("checkbox", { name: "Role reader (reader)" }), false);
      await toggle(change.getByRole("checkbox", { name: "Role writer (writer)" }), true);
      await change.getByRole("button", { name: "Save" }).click();
      await change.waitFor({ state: "detached" });
      await expect.poll(() => row.innerText()).toMatch(/writer\s+Active/);
      expect((await grantsOfProject())[0]).toMatchObject({ roleKeys: ["writer"], state: ACTIVE });
      expect((await api.grants.ok("GetUserGrant", { id: userGrantId })).grant.grant.roleKeys ?? []).toEqual([]);

      // Deactivated, then reactivated.
      await row.getByRole("button", { name: "Deactivate" }).click();
      await expect.poll(() => row.innerText()).toMatch(/writer\s+Inactive/);
      expect((await grantsOfProject())[0]).toMatchObject({ state: INACTIVE });
      await row.getByRole("button", { name: "Reactivate" }).click();
      await expect.poll(() => row.innerText()).toMatch(/writer\s+Active/);
      expect((await grantsOfProject())[0]).toMatchObject({ state: ACTIVE });

      // The role removed from the project: the grant's row shows it gone at once.
      await region(page, "Roles").getByRole("button", { name: "Remove the role writer" }).click();
      await expect.poll(() => row.innerText()).not.toContain("writer");
      expect((await grantsOfProject())[0]).toMatchObject({ roleKeys: [], state: ACTIVE });

      // Removed after confirming, with the user grant made under it.
      await row.getByRole("button", { name: "Remove…" }).click();
      const confirm = page.getByRole("alertdialog", { name: `Remove the grant to ${partner.name}?` });
      await confirm.getByText("every user grant its owners made under the grant").waitFor();
      await confirm.getByRole("button", { name: "Remove the grant" }).click();
      await grants.getByText("The project is granted to no other organization.").waitFor();
      expect(await grantsOfProject()).toEqual([]);
      const gone = await api.grants.call("GetUserGrant", { id: userGrantId });
      expect(gone.ok ? "found" : gone.code).toBe(Code.NotFound);
      await region(page, "User grants").getByText("Nobody holds roles of this project yet.").waitFor();
      expect(tab.errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
