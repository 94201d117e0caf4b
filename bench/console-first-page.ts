/**
 * The console's first page (issue 36: "interactive within 1 s on localhost"), in headless
 * Chromium (Debian's, CHROMIUM_PATH) against the built service on PostgreSQL, signed in as an
 * instance administrator: from navigating to /ui/console/ until the home page shows its
 * counts (the API answered and React rendered them), measured two ways:
 * - warm: a reload in the signed-in tab (hashed assets from the browser's cache, index.html,
 *   config.json, discovery, userinfo and the API calls from the service);
 * - cold: a new browser context (an empty cache: every script and stylesheet downloaded) given
 *   the signed-in tab's session storage, as a person opening the console in a fresh browser;
 *   timed from the navigation, as the baseline is (the context and its renderer process are
 *   made before, untimed: they are the browser's start-up, the same for any page).
 * The baseline, in the same browser and against the same service: the login pages' password
 * reset page, server-rendered HTML and one stylesheet, until its heading shows.
 *
 * Knobs: BENCH_FIRST_PAGE_ROUNDS (20), BENCH_DATABASE_URL, CHROMIUM_PATH.
 */
import { performance } from "node:perf_hooks";
import { chromium, type Browser, type Page } from "playwright-core";
import type { Created } from "./http-json.js";
import { latencyOf, latencyReport, runLatencyBench, type Latency } from "./latency.js";
import { callApi, type ServiceUnderTest } from "./service.js";
import { USER_PASSWORD, wholeNumber } from "./settings.js";

// The browser's globals in the functions that run in the page (this program's types leave out the DOM).
declare const sessionStorage: { setItem(key: string, value: string): void };
declare const location: { pathname: string };

const ROUNDS = wholeNumber("BENCH_FIRST_PAGE_ROUNDS", 20, 3, 1000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const AIM_MS = 1000;

/**
 * Three rounds of warm-up, then ROUNDS timed ones. `open` and `close` run untimed around each
 * round: a new browser context's renderer process is the browser's start-up, not the page's.
 */
async function timed<T>(run: (on: T) => Promise<void>, open: () => Promise<T>, close: (on: T) => Promise<void> = async () => {}): Promise<number[]> {
  const times: number[] = [];
  for (let n = -3; n < ROUNDS; n++) {
    const on = await open();
    const started = performance.now();
    await run(on);
    if (n >= 0) times.push(performance.now() - started);
    await close(on);
  }
  return times;
}

/** The home page with its counts: the first figure of its cards is a number. */
const homeShown = (page: Page) => page.locator(".card .count").first().waitFor();

async function signedInTab(browser: Browser, base: string, loginName: string): Promise<Page> {
  const page = await (await browser.newContext({ locale: "en-US" })).newPage();
  await page.goto(`${base}/ui/console/`);
  await page.getByLabel("Login name").fill(loginName);
  await page.getByRole("button", { name: "Next" }).click();
  await page.getByLabel("Password").fill(USER_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await homeShown(page);
  return page;
}

async function measure(service: ServiceUnderTest): Promise<Latency[]> {
  const base = `http://localhost:${service.port}`;
  const username = "console-bench";
  const user = (await callApi(
    service.port,
    service.headers,
    "POST",
    "/resources/v3alpha/users",
    {
      username,
      human: {
        profile: { givenName: "Console", familyName: "Bench" },
        email: { address: "console-bench@example.com", isVerified: true },
        password: USER_PASSWORD,
      },
    },
    201,
  )) as Created;
  await callApi(service.port, service.headers, "POST", "/resources/v3alpha/memberships", { userId: user.details.id, roles: ["IAM_OWNER"] }, 201);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
  try {
    const tab = await signedInTab(browser, base, username);
    const storage = await tab.evaluate(() =>
      JSON.stringify(Object.entries((globalThis as unknown as { sessionStorage: Record<string, string> }).sessionStorage)),
    );
    const warm = await timed(
      async (page) => {
        await page.reload();
        await homeShown(page);
      },
      async () => tab,
    );
    const cold = await timed(
      async (page) => {
        await page.goto(`${base}/ui/console/`);
        await homeShown(page);
      },
      async () => {
        const context = await browser.newContext({ locale: "en-US" });
        await context.addInitScript((entries: string) => {
          if (location.pathname.startsWith("/ui/console/"))
            for (const [key, value] of JSON.parse(entries) as [string, string][]) sessionStorage.setItem(key, value);
        }, storage);
        return context.newPage();
      },
      (page) => page.context().close(),
    );
    const loginPage = async (page: Page) => {
      await page.goto(`${base}/ui/login/password/reset`);
      await page.getByRole("heading").first().waitFor();
    };
    const plain = await (await browser.newContext({ locale: "en-US" })).newPage();
    const baseline = await timed(loginPage, async () => plain);
    const baselineCold = await timed(
      loginPage,
      async () => (await browser.newContext({ locale: "en-US" })).newPage(),
      (page) => page.context().close(),
    );
    return [
      latencyOf("login page, server-rendered (baseline)", baseline),
      latencyOf("login page, cold (new browser context)", baselineCold),
      latencyOf("console home, warm (reload)", warm),
      latencyOf("console home, cold (new browser context)", cold),
    ];
  } finally {
    await browser.close();
  }
}

runLatencyBench(async (service) => {
  const rows = await measure(service);
  const setup = `Headless Chromium on the same machine, PostgreSQL, ${ROUNDS} loads each after 3 of warm-up; until the home page shows its counts.`;
  return latencyReport("The console's first page", setup, rows, AIM_MS, 0);
});
