import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ok, uniqueName } from "../users/helpers.js";
import { consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * The organization switcher (console/src/components/OrgSwitcher.tsx) in headless Chromium,
 * as an instance administrator uses it on a long page scrolled down: what is typed stays, and
 * the organizations it finds on the server stay offered, while the page scrolls to the field
 * and while the page's data refresh; chosen by arrow keys and Enter, focus stays in the field;
 * Escape puts the chosen organization's name back; a click into the field opens the list.
 */

/** React Query's staleTime in the console (main.tsx): a refresh refetches only data older. */
const STALE_MS = 10_000;

// The browser's globals in functions page.evaluate runs (this program's types leave out the DOM).
declare const window: { scrollY: number; scrollTo(x: number, y: number): void; dispatchEvent(event: unknown): boolean };
declare const document: { activeElement: unknown; documentElement: { scrollHeight: number } };
declare const Event: new (type: string) => unknown;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the organization switcher on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;
  // One stem, so that typing it finds both.
  const stem = uniqueName("Switch");
  const alpha = { id: "", name: `${stem} Alpha` };
  const beta = { id: "", name: `${stem} Beta` };
  const orgs = () => protocolClient(PlatformOrganizations, "grpc", server.baseUrl);

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind), launchChromium()]);
    admin = await instanceOwner(server, "switcher");
    for (const org of [alpha, beta]) org.id = ok(await orgs().call("CreateOrganization", { organization: { name: org.name } }, server.adminToken)).details.id;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);
  const options = (page: Page) => page.getByRole("option").allInnerTexts();

  it("keeps what is typed and what it found through a scroll and a refresh; arrow keys, Enter, Escape and a click", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Settings" }).click();
      await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Lockout and passwords" }).click();
      await page.getByRole("heading", { name: "Lockout and passwords" }).waitFor();
      await page.getByLabel("Minimum length (characters)").waitFor();
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);

      // Filled at once down the page: the page scrolls up to the field while its list opens.
      const switcher = page.getByRole("combobox", { name: "Organization" });
      await switcher.fill(stem);
      const found = ok(
        await orgs().call(
          "SearchOrganizations",
          { filters: [{ name: { name: stem, method: "TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE" } }], query: { asc: true } },
          server.adminToken,
        ),
      ).result.map((o: { name: string }) => o.name);
      expect(found).toEqual([alpha.name, beta.name]);
      await expect.poll(() => options(page)).toEqual(["All organizations", ...found]);
      await expect(switcher.inputValue()).resolves.toBe(stem);

      // The page's own refresh (the tab shown again, its data stale): the text and the options stay.
      await page.waitForTimeout(STALE_MS);
      const refetched = page.waitForResponse((r) => r.url().includes("/SearchOrganizations"));
      await page.evaluate(() => window.dispatchEvent(new Event("visibilitychange")));
      await refetched;
      await page.waitForLoadState("networkidle");
      await expect(switcher.inputValue()).resolves.toBe(stem);
      await expect(options(page)).resolves.toEqual(["All organizations", ...found]);

      // By keys: the second match chosen; the field keeps the focus, showing its name.
      await switcher.press("ArrowDown");
      await switcher.press("ArrowDown");
      await switcher.press("ArrowDown");
      await expect(page.locator("[role=option][data-focused]").innerText()).resolves.toBe(beta.name);
      await switcher.press("Enter");
      await page.waitForURL((u) => u.searchParams.get("org") === beta.id);
      await page.getByRole("heading", { name: "Lockout and passwords" }).waitFor();
      await page.waitForLoadState("networkidle");
      await expect(switcher.inputValue()).resolves.toBe(beta.name);
      await expect(switcher.evaluate((input) => input === document.activeElement)).resolves.toBe(true);
      await expect(options(page)).resolves.toEqual([]);
      await inspect("switcher", tab);

      // Escape: the search ends, the chosen organization stays.
      await switcher.fill(alpha.name);
      await expect.poll(() => options(page)).toEqual(["All organizations", beta.name, alpha.name]);
      await switcher.press("Escape");
      await expect(switcher.inputValue()).resolves.toBe(beta.name);
      await expect(options(page)).resolves.toEqual([]);
      expect(new URL(page.url()).searchParams.get("org")).toBe(beta.id);

      // A click into the field that has the focus opens the list; the instance chosen again.
      await switcher.click();
      await page.getByRole("option", { name: "All organizations" }).click();
      await page.waitForURL((u) => !u.searchParams.has("org"));
      await expect.poll(() => switcher.inputValue()).toBe("All organizations");
    } finally {
      await page.context().close();
    }
  }, 60_000);
});
