import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { expect } from "vitest";

/*
 * What every browser test asks of a page as a person meets it (the login pages, the console):
 * accessible in light and dark mode (axe-core: no serious or critical violation), no sideways
 * scrolling on a narrow screen, no console error (a CSP violation is one); photographed at
 * each width into `shots` for the docs and for review.
 */

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SCHEMES = ["light", "dark"] as const;

// The browser's globals in functions page.evaluate runs (this program's types leave out the DOM).
declare const window: { axe: { run(): Promise<{ violations: AxeViolation[] }> } } & Record<string, unknown>;
declare const document: { documentElement: { scrollWidth: number } };

interface AxeViolation {
  id: string;
  impact?: string;
  nodes: { target: unknown[] }[];
}

export interface Tab {
  page: Page;
  errors: string[];
}

/** A page in a context of its own (or the one given), collecting console errors. */
export async function openTab(browser: Browser, context?: BrowserContext): Promise<Tab> {
  const page = await (context ?? (await browser.newContext({ locale: "en-US" }))).newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    // Pages answered 4xx (a wrong password is a 401) are logged so; they are meant.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of 4")) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return { page, errors };
}

async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Runtime.evaluate", { expression: AXE });
    await cdp.detach();
  }
  const violations = await page.evaluate(() => window.axe.run().then((r) => r.violations));
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/**
 * The page as it stands: accessible in both modes, fits `narrow` px, no console error so far;
 * photographed when `shots` is given. `looks: false` checks the console errors alone: the
 * journeys run on both databases, and a page looks the same on either, so its look (axe,
 * width, photographs: most of a browser test's CPU) is checked on the first.
 */
export async function inspectPage(
  name: string,
  { page, errors }: Tab,
  opts: { shots?: string | undefined; widths: number[]; narrow: number; waitFor?: "load" | "networkidle"; looks?: boolean },
): Promise<void> {
  await page.waitForLoadState(opts.waitFor ?? "load");
  if (opts.looks === false) {
    expect(errors, `${name}: console errors`).toEqual([]);
    return;
  }
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme });
    expect(await axeViolations(page), `${name} in ${colorScheme} mode`).toEqual([]);
    if (opts.shots) {
      for (const width of opts.widths) {
        await page.setViewportSize({ width, height: 800 });
        await page.screenshot({ path: join(opts.shots, `${name}-${colorScheme}-${width}.png`), fullPage: true });
      }
    }
  }
  await page.setViewportSize({ width: opts.narrow, height: 640 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits ${opts.narrow} px`).toBeLessThanOrEqual(opts.narrow);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: "light" });
  expect(errors, `${name}: console errors`).toEqual([]);
}

/** Debian's Chromium (or CHROMIUM_PATH); the browser tests skip, saying so, where it is missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Headless Chromium as every browser test runs it: no sandbox (containers), no background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}
