import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { consoleInspector } from "./helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * The administration console (console/, served at /ui/console/) in headless Chromium, as a
 * person uses it: the first administrator's invitation (choose a password, then the console),
 * signing in through the service's own login pages, the home page, creating an organization
 * and adding a domain to it; a person without rights sees no administration. Every page is
 * scanned by axe-core in light and dark mode (no serious or critical violation), must not
 * scroll sideways at 375 px, causes no console error (a CSP violation is one), and is
 * photographed at 1280 and 375 px into test-results/screenshots/console/.
 */

const PASSWORD = "Console-Pa55word!";
const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" });
    [browser] = await Promise.all([launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const newPage = () => openTab(browser);
  /** The page as it stands, once its calls are answered (tests/support/page-checks.ts). */
  const inspect = consoleInspector(kind);

  /** The login pages as the console sends a person there: login name, password; back in the console. */
  async function signIn(page: Page, loginName: string, password: string) {
    await page.getByLabel(en.loginName).fill(loginName);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(password);
    await page.getByRole("button", { name: en.signIn }).click();
    await page.waitForURL((u) => u.pathname.startsWith("/ui/console/") && !u.pathname.endsWith("/callback"));
  }

  it("the first administrator's invitation leads to a password and the console; an organization and its domain", async () => {
    const link = new URL((await readFile(join(server.config.dataDir, "admin-invite.url"), "utf8")).trim());
    const tab = await newPage();
    const { page } = tab;
    try {
      await page.goto(`${server.baseUrl}${link.pathname}${link.search}`);
      await page.getByLabel(en.newPassword, { exact: true }).fill(PASSWORD);
      await page.getByLabel(en.confirmPassword).fill(PASSWORD);
      await page.getByRole("button", { name: en.setPassword }).click();
      // Once the password is set, on to the console, which sends the person to sign in.
      const onward = page.getByRole("link", { name: /console|continue/i });
      if (await onward.count()) await onward.first().click();
      await page.getByLabel(en.loginName).waitFor();
      await signIn(page, "admin", PASSWORD);
      await page.getByRole("heading", { name: "Home" }).waitFor();
      // The person by name (from userinfo), not by id.
      await page.getByRole("banner").getByText("Platform Administrator").waitFor();
      await expect(page.getByText("Organizations").first().isVisible()).resolves.toBe(true);
      await inspect("home", tab);

      await page.getByRole("link", { name: "Organizations" }).first().click();
      await page.getByRole("heading", { name: "Organizations" }).waitFor();
      await page.getByRole("row").nth(1).waitFor();
      await inspect("organizations", tab);

      const name = uniqueName("Acme");
      await page.getByRole("button", { name: "New organization" }).click();
      await page.getByRole("dialog").getByLabel("Name").fill(name);
      await inspect("organization-new", tab);
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      // Its generated domain, primary.
      await page.getByRole("rowheader", { name: /\.localhost/ }).waitFor();
      await page.getByLabel("Add a domain").fill(`${name.toLowerCase()}.example.com`);
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByRole("rowheader", { name: `${name.toLowerCase()}.example.com` }).waitFor();
      await page
        .getByRole("row", { name: new RegExp(`${name.toLowerCase()}\\.example\\.com`) })
        .getByRole("button", { name: "Verify…" })
        .click();
      await page.getByRole("button", { name: "Prove with a DNS record" }).click();
      await page.getByText(`_platform-challenge.${name.toLowerCase()}.example.com`).waitFor();
      await inspect("organization", tab);
      // A refusal in the API's words, next to what caused it.
      await page.getByRole("button", { name: "Check now" }).click();
      await expect(page.getByRole("alert").last().innerText()).resolves.toContain("no TXT record");
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("takes an organization's owner without rights in the instance to their organization", async () => {
    const orgName = uniqueName("Tenant");
    const org = await createOrg(server, orgName);
    const name = uniqueName("tenant-owner");
    const id = await new Users(server).create(humanUser(name, { password: PASSWORD }), { orgId: org.id });
    ok(
      await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const tab = await newPage();
    const { page } = tab;
    try {
      await page.goto(`${server.baseUrl}/ui/console/`);
      await page.getByLabel(en.loginName).waitFor();
      await signIn(page, `${name}@${org.primary}`, PASSWORD);
      await page.getByRole("heading", { name: "Home" }).waitFor();
      await expect.poll(() => new URL(page.url()).searchParams.get("org")).toBe(org.id);
      // Their organization by name in the switcher, which offers no instance-wide view.
      await expect.poll(() => page.getByRole("combobox", { name: "Organization" }).inputValue()).toBe(orgName);
      await page.getByRole("link", { name: "People and service accounts" }).waitFor();
      await expect(page.getByText("You have no administration rights here.").count()).resolves.toBe(0);
      await page.getByRole("link", { name: "Users", exact: true }).click();
      await page
        .getByRole("gridcell", { name: new RegExp(name) })
        .first()
        .waitFor();
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("shows a person without rights no administration", async () => {
    const name = uniqueName("nobody");
    await new Users(server).create(humanUser(name, { password: PASSWORD }));
    const tab = await newPage();
    const { page } = tab;
    try {
      await page.goto(`${server.baseUrl}/ui/console/`);
      await page.getByLabel(en.loginName).waitFor();
      await signIn(page, name, PASSWORD);
      await page.getByText("You have no administration rights here.").waitFor();
      await expect(page.getByRole("link", { name: "Organizations" }).count()).resolves.toBe(0);
      await inspect("no-rights", tab);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
