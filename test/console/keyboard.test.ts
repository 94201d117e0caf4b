import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CONSOLE_PASSWORD, instanceOwner } from "./helpers.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { uniqueName } from "../users/helpers.js";

/*
 * The console by keyboard alone, in headless Chromium: signing in, the skip link first with a
 * visible focus ring, the navigation in order, a dialog opened, filled and submitted with keys,
 * Escape closing one; no mouse event at all.
 */

// The browser's globals in functions page.evaluate runs (this program's types leave out the DOM).
declare const document: { activeElement: { tagName: string; id: string; textContent: string | null } | null };
declare function getComputedStyle(element: unknown): { outlineStyle: string; outlineWidth: string };

const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the console by keyboard on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000" }), launchChromium()]);
    admin = await instanceOwner(server, "keys");
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** What has the focus: its tag, id and text, and whether a focus ring shows. */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const el = document.activeElement;
      const style = el ? getComputedStyle(el) : undefined;
      return {
        tag: el?.tagName.toLowerCase(),
        id: el?.id ?? "",
        text: (el?.textContent ?? "").trim(),
        ring: Boolean(style && style.outlineStyle !== "none" && style.outlineWidth !== "0px"),
      };
    });

  /** Tabs forward until the focus is on an element whose text is `text`; fails after `max` presses. */
  async function tabTo(page: Page, text: string, max = 30) {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press("Tab");
      if ((await focused(page)).text === text) return;
    }
    throw new Error(`"${text}" never took the focus in ${max} presses of Tab`);
  }

  it("signs in, skips to the content, walks the navigation, and creates an organization with keys alone", async () => {
    const { page } = await openTab(browser);
    try {
      await page.goto(`${server.baseUrl}/ui/console/`);
      // The login pages put the focus on the first field.
      await page.getByLabel(en.loginName).waitFor();
      await page.keyboard.type(admin);
      await page.keyboard.press("Enter");
      await page.getByLabel(en.password).waitFor();
      await page.keyboard.type(CONSOLE_PASSWORD);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Home" }).waitFor();

      // First stop: the skip link, visibly focused; it moves the focus to the page's content.
      await page.keyboard.press("Tab");
      expect(await focused(page)).toMatchObject({ tag: "a", text: "Skip to content", ring: true });
      await page.keyboard.press("Enter");
      expect(await focused(page)).toMatchObject({ tag: "main", id: "main" });

      // The navigation, reached and followed by keys.
      await page.keyboard.press("Shift+Tab");
      await tabTo(page, "Organizations");
      expect((await focused(page)).ring).toBe(true);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Organizations" }).waitFor();

      // A dialog: opened, closed with Escape (the focus back on its button), opened again, filled and submitted.
      await tabTo(page, "New organization");
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
      await page.keyboard.press("Escape");
      await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
      // React Aria gives the focus back a frame after the dialog is gone: later on a busy machine.
      await expect.poll(async () => (await focused(page)).text).toBe("New organization");
      await page.keyboard.press("Enter");
      const name = uniqueName("Keys");
      // The name field has the focus as the dialog opens.
      await page.getByRole("dialog").getByLabel("Name").waitFor();
      expect((await focused(page)).tag).toBe("input");
      await page.keyboard.type(name);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name }).waitFor();
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
