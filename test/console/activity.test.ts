import { existsSync } from "node:fs";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformEvents } from "../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { createProject, projectClient } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * The audit log in the console (console/src/pages/Activity.tsx, History.tsx, pages/events/)
 * in headless Chromium: the instance's Activity lists a change made through the API with
 * its editor and where it came from; a group narrows it; "Load more" pages; a change made
 * while the page is open appears without a reload, once, also across the stream's reconnects
 * (the service ends every stream after PLATFORM_EVENTS_WATCH_MAX_DURATION, 2 s here); an
 * organization owner's Activity shows only their organization's events; a user's History
 * and Sign-ins tabs; a project's History tab. Nobody without events.read is shown the link.
 */

/** A wrong password for the failed sign-in the Sign-ins tab shows. */
const WRONG = "Wr0ng-Pa55word!";

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the audit log in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let users: Users;
  /** The instance owner's tab, signed in once for the tests that act as them. */
  let owner: Tab;
  /** A service account that owns the instance: the editor of the changes made through the API. */
  const bot = { id: "", name: uniqueName("Release bot "), token: "", patId: "" };
  const orgA = { id: "", name: uniqueName("Guild") };
  const orgB = { id: "", name: uniqueName("Other") };
  const orgOwner = { id: "", loginName: uniqueName("orgowner") };
  const person = { id: "", loginName: uniqueName("ada") };
  const ledger = { id: "", name: uniqueName("Ledger") };
  const hidden = { id: "", name: uniqueName("Hidden") };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer(kind, {
        PLATFORM_LOGIN_RATE_PER_IP: "1000",
        PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000",
        PLATFORM_EVENTS_WATCH_POLL_INTERVAL: "100ms",
        PLATFORM_EVENTS_WATCH_MAX_DURATION: "2s",
      }),
      launchChromium(),
    ]);
    users = new Users(server);
    const memberships = protocolClient(PlatformMemberships, "grpc", server.baseUrl);
    bot.id = await users.create(machineUser(uniqueName("bot"), { name: bot.name }));
    ok(await memberships.call("CreateMembership", { membership: { userId: bot.id, roles: ["IAM_OWNER"] } }, server.adminToken));
    ({ token: bot.token, id: bot.patId } = await users.pat(bot.id));
    orgA.id = (await createOrg(server, orgA.name)).id;
    orgB.id = (await createOrg(server, orgB.name)).id;
    orgOwner.id = await users.create(humanUser(orgOwner.loginName, { password: CONSOLE_PASSWORD }));
    ok(await memberships.call("CreateMembership", { membership: { userId: orgOwner.id, roles: ["ORG_OWNER"] }, ctx: { orgId: orgA.id } }, server.adminToken));
    person.id = await users.create(humanUser(person.loginName, { password: CONSOLE_PASSWORD }, { givenName: "Ada", familyName: "Lovelace" }));
    ledger.id = await createProject(server.baseUrl, bot.token, ledger.name, orgA.id);
    hidden.id = await createProject(server.baseUrl, server.adminToken, hidden.name, orgB.id);
    owner = await openTab(browser);
    await signInToConsole(owner.page, server, await instanceOwner(server, "auditor"));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);
  const log = (page: Page, name = "Activity") => page.getByRole("table", { name, exact: true });
  /** The rows of events (not their opened details). */
  const rows = (table: Locator) => table.locator("tbody > tr:not(.details)");
  const column = (table: Locator, label: string) => table.locator(`tbody > tr:not(.details) > [data-label="${label}"]`).allInnerTexts();
  const live = (page: Page) => page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  /** The rows of one resource, found by its ID. */
  const rowsOf = (table: Locator, id: string) => rows(table).filter({ hasText: id });

  async function openActivity(page: Page) {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Activity" }).click();
    await page.getByRole("heading", { name: "Activity", level: 1 }).waitFor();
    await live(page);
  }

  it("lists a change made through the API with its editor and where it came from; a group narrows it; Load more pages", async () => {
    // More project events than a page holds: the group's second page has some.
    await Promise.all(
      Array.from({ length: 55 }, (_, i) =>
        projectClient(server.baseUrl, bot.token).ok("AddProjectRole", { projectId: ledger.id, role: { key: `role-${i}`, displayName: `Role ${i}` } }),
      ),
    );
    const change = { id: "", name: uniqueName("Change") };
    change.id = await createProject(server.baseUrl, bot.token, change.name, orgA.id);
    // Newer still, and no project's: the group below must leave it out.
    const other = await users.as(bot.token).create(machineUser(uniqueName("other")));
    const { page } = owner;
    await page.goto(`${server.baseUrl}/ui/console/`);
    await openActivity(page);
    const table = log(page);
    const added = rowsOf(table, change.id).filter({ hasText: "project.added" });
    await added.waitFor();
    expect(await added.locator('[data-label="Editor"]').innerText()).toBe(bot.name);
    expect(await added.getByRole("link", { name: change.id }).getAttribute("href")).toBe(`/ui/console/projects/${change.id}`);
    await added.getByRole("button", { name: /^Details: project\.added/ }).click();
    const details = table.locator("tr.details");
    await details.waitFor();
    const shown = await details.innerText();
    expect(shown).toContain(`Personal access token ${bot.patId}`);
    expect(shown).toMatch(/IP address\s+\S*127\.0\.0\.1/);
    expect(shown).toContain(`"name": "${change.name}"`);
    expect(shown).toContain(orgA.id);
    await inspect("activity", owner, "load");
    await added.getByRole("button", { name: /^Hide details: project\.added/ }).click();
    await details.waitFor({ state: "detached" });

    // The group project.*: its types only, fifty to a page.
    expect(await rows(table).first().innerText()).toContain(other);
    await page.getByRole("combobox", { name: "Event" }).fill("project.*");
    await page.getByRole("option", { name: "project.*", exact: true }).click();
    await rowsOf(table, other).waitFor({ state: "detached" });
    expect((await column(table, "Event")).every((t) => t.startsWith("project."))).toBe(true);
    await expect.poll(() => rows(table).count()).toBe(50);
    const total = ok(
      await protocolClient(PlatformEvents, "grpc", server.baseUrl).call(
        "SearchEvents",
        { filters: [{ types: { groups: ["project"] } }], limit: 1000 },
        server.adminToken,
      ),
    ).result.length as number;
    expect(total).toBeGreaterThan(50);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows(table).count()).toBe(total);
    await page.getByRole("button", { name: "Load more" }).waitFor({ state: "detached" });
    expect(owner.errors).toEqual([]);
  }, 90_000);

  it("shows a change made while the page is open without a reload, once, across the stream's reconnects", async () => {
    const { page } = owner;
    await page.goto(`${server.baseUrl}/ui/console/`);
    await openActivity(page);
    const table = log(page);
    await expect.poll(() => rows(table).count()).toBe(50);
    // The service ends each stream after 2 s: the page has opened it again at least once.
    await page.waitForTimeout(2500);
    const fresh = await createProject(server.baseUrl, bot.token, uniqueName("Fresh"), orgA.id);
    const row = rowsOf(table, fresh);
    await row.waitFor();
    expect(await rows(table).first().innerText()).toContain(fresh);
    // Through more reconnects: the new event once, and nothing shown before again.
    await page.waitForTimeout(2500);
    expect(await row.count()).toBe(1);
    expect(await rows(table).count()).toBe(51);
    await live(page);
    expect(owner.errors).toEqual([]);
  }, 60_000);

  it("shows an organization owner their organization's events only", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, orgOwner.loginName);
      // The console acts in their organization (they have no rights in the instance).
      await page.waitForURL((u) => u.searchParams.get("org") === orgA.id);
      await openActivity(page);
      await page.getByText(`Changes to the resources of ${orgA.name}`).waitFor();
      const table = log(page);
      await rowsOf(table, ledger.id).first().waitFor();
      expect(await rowsOf(table, hidden.id).count()).toBe(0);
      expect(await rowsOf(table, orgB.id).count()).toBe(0);
      // Live too: another organization's change never arrives, theirs does.
      const theirs = await createProject(server.baseUrl, server.adminToken, uniqueName("Theirs"), orgB.id);
      const ours = await createProject(server.baseUrl, server.adminToken, uniqueName("Ours"), orgA.id);
      await rowsOf(table, ours).waitFor();
      expect(await rowsOf(table, theirs).count()).toBe(0);
      expect(tab.errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it("shows neither Activity nor a resource's History to a person who may read users but not the log", async () => {
    // A login UI's role: users and sessions, not the audit log.
    ok(
      await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
        "CreateMembership",
        { membership: { userId: person.id, roles: ["LOGIN_CLIENT"] } },
        server.adminToken,
      ),
    );
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, person.loginName);
      await expect(page.getByRole("navigation", { name: "Console" }).getByRole("link").allInnerTexts()).resolves.toEqual(["Home", "Users"]);
      await page.goto(`${server.baseUrl}/ui/console/users/${person.id}`);
      await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor();
      expect(await page.getByRole("navigation", { name: "User" }).count()).toBe(0);
      expect(tab.errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it("a user's History tab, and their Sign-ins tab with a failed attempt's outcome, method, channel, reason, client, address and user agent", async () => {
    const agent = `Sign-in test browser ${uniqueName("ua")}`;
    await protocolClient(PlatformSessions, "grpc", server.baseUrl).call(
      "CreateSession",
      { checks: { user: { userId: person.id }, password: { password: WRONG } }, userAgent: { ip: "203.0.113.9", description: agent } },
      server.adminToken,
    );
    const { page } = owner;
    await page.goto(`${server.baseUrl}/ui/console/users/${person.id}`);
    await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor();
    const tabs = page.getByRole("navigation", { name: "User" });
    await tabs.getByRole("link", { name: "History" }).click();
    await page.waitForURL((u) => u.pathname.endsWith(`/users/${person.id}/history`));
    const history = log(page, "History");
    await live(page);
    await rows(history).filter({ hasText: "user.human.added" }).waitFor();
    expect(new Set(await column(history, "Resource"))).toEqual(new Set([`User ${person.id}`]));
    // A change while the tab is open.
    ok(await users.as(bot.token).call("LockUser", { id: person.id }));
    await rows(history).filter({ hasText: "user.locked" }).waitFor();
    expect(await rows(history).first().locator('[data-label="Editor"]').innerText()).toBe(bot.name);
    await inspect("user-history", owner, "load");

    await tabs.getByRole("link", { name: "Sign-ins" }).click();
    const signIns = log(page, "Sign-ins");
    const attempt = rows(signIns).filter({ hasText: agent });
    await attempt.waitFor();
    const cells = Object.fromEntries(
      await Promise.all((await attempt.locator("[data-label]").all()).map(async (c) => [await c.getAttribute("data-label"), (await c.innerText()).trim()])),
    );
    expect(cells).toMatchObject({
      Outcome: "Failed",
      Method: "Password",
      Channel: "Session API",
      Reason: "Wrong password",
      "IP address": "203.0.113.9",
      "User agent": agent,
    });
    expect(cells.Client).toMatch(/^pat:/);
    await inspect("user-sign-ins", owner, "load");
    expect(owner.errors).toEqual([]);
  }, 60_000);

  it("a project's History tab", async () => {
    const { page } = owner;
    await page.goto(`${server.baseUrl}/ui/console/projects/${ledger.id}`);
    await page.getByRole("heading", { name: ledger.name, level: 1 }).waitFor();
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "History" }).click();
    const history = log(page, "History");
    await live(page);
    // Newest first, fifty to a page: its 55 roles, then (on the next page) the project's creation.
    await expect.poll(() => rows(history).count()).toBe(50);
    expect(new Set(await column(history, "Event"))).toEqual(new Set(["project.role.added"]));
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows(history).count()).toBe(56);
    expect(await rows(history).last().innerText()).toContain("project.added");
    await projectClient(server.baseUrl, bot.token).ok("PatchProject", { id: ledger.id, project: { name: `${ledger.name} renamed` } });
    await rows(history).filter({ hasText: "project.changed" }).waitFor();
    expect(await rows(history).first().innerText()).toContain("project.changed");
    expect(await rows(history).count()).toBe(57);
    await inspect("project-history", owner, "load");
    expect(owner.errors).toEqual([]);
  }, 60_000);
});
