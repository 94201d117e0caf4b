import type { JsonObject } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import * as client from "openid-client";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { AUTH_CODE, BASIC, WEB, appClient, createProject, oidc } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { inspectPage, openTab, type Tab } from "../support/page-checks.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";

// The browser's globals in functions that page.evaluate runs in the page: this Node program's
// types leave out the DOM library (its Blob, Headers, … would replace Node's everywhere), so
// these are only what those functions read, named and shaped as DOM has them.
interface PageElement {
  id: string;
}
interface PageImage extends PageElement {
  currentSrc: string;
  complete: boolean;
  naturalWidth: number;
}
declare const document: {
  activeElement: PageElement | null;
  body: PageElement;
  querySelector<E extends PageElement = PageElement>(selectors: string): E | null;
};
declare function getComputedStyle(element: PageElement): { backgroundColor: string; fontFamily: string };

/*
 * The login pages' design in a real browser (src/oidc/login/view/render.ts, stylesheet.ts): every
 * page of a sign-in, opened as a person reaches it, is scanned by axe-core in light and dark
 * mode (no serious or critical violation), must not scroll sideways at 320 px, must cause no
 * console error (a Content-Security-Policy violation is one), and is photographed in both
 * modes at 1280 and 375 px into test-results/screenshots/login/ (looked at, not compared).
 * The journeys run on both databases; the pages' look is checked on the first.
 * A branded organization's colors, logo and options show on its pages.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CB = "https://rp.example/cb";
const PASSWORD = "Corr3ct-horse!";
const APP = "Acme Portal";
const en = TEXTS.en;
const SHOTS = join(process.cwd(), "test-results", "screenshots", "login");
const WIDTHS = [1280, 375];

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the login pages' design on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let users: Users;
  let browser: Browser;
  let config: client.Configuration;
  /** The look (axe, width, photographs) once, on the first database: the pages are the same on both. */
  const firstDatabase = kind === DATABASE_KINDS[0];
  const base = () => server.baseUrl;

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_LOGIN_RATE_PER_IP: "1000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000",
      PLATFORM_PASSWORD_RESET_ANSWER_TIME: "0ms",
    });
    users = new Users(server);
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"] }),
      mkdir(SHOTS, { recursive: true }),
    ]);
    const projectId = await createProject(base(), server.adminToken, "design");
    const app = await appClient(base(), server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: APP, oidc: oidc({ redirectUris: [CB], appType: WEB, authMethodType: BASIC, grantTypes: [AUTH_CODE] }) },
    });
    config = await client.discovery(new URL(base()), app.clientId, app.clientSecret, undefined, { execute: [client.allowInsecureRequests] });
    await loginSettings({ allowRegister: { set: true } }, { orgId: server.defaultOrgId });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const loginSettings = async (settings: JsonObject, ctx?: JsonObject) =>
    ok(await protocolClient(PlatformLoginSettings, "grpc", base()).call("SetLoginSettings", { settings, ...(ctx && { ctx }) }, server.adminToken));

  async function person(opts: { orgId?: string; mustChange?: boolean; name?: string } = {}) {
    const name = opts.name ?? uniqueName("ada");
    const id = await users.create(
      humanUser(name, { password: PASSWORD, ...(opts.mustChange && { passwordChangeRequired: true }) }, { givenName: "Ada", familyName: "Lovelace" }),
      opts.orgId ? { orgId: opts.orgId } : undefined,
    );
    return { id, name };
  }

  function authorizeUrl(params: Record<string, string> = {}): string {
    return client.buildAuthorizationUrl(config, {
      redirect_uri: CB,
      scope: "openid",
      state: "design",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGv2xqCSQs",
      code_challenge_method: "S256",
      ...params,
    }).href;
  }

  /** A page in a context of its own, collecting console errors; the relying party's callback answered here. */
  async function newPage(context?: BrowserContext): Promise<Tab> {
    const tab = await openTab(browser, context);
    await tab.page.route(`${new URL(CB).origin}/**`, (route) => route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" }));
    return tab;
  }

  /**
   * The page as it stands: accessible in both modes, no sideways scrolling at 320 px, no
   * console error so far, the application's name under the heading when `app`; photographed.
   */
  async function inspect(name: string, tab: Tab, app = true) {
    await inspectPage(name, tab, { shots: SHOTS, widths: WIDTHS, narrow: 320, looks: firstDatabase });
    if (app) await expect(tab.page.locator("main .app").innerText()).resolves.toBe(en.appContext.replace("{app}", APP));
  }

  it("signing in with a password and a second factor, choosing the account again, signing out", async () => {
    const { id, name } = await person();
    const { secret } = ok(await users.call("AddTOTP", { id }));
    ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
    const tab = await newPage();
    const { page } = tab;
    try {
      await page.goto(authorizeUrl());
      await inspect("login-name", tab);
      await expect(page.getByRole("link", { name: en.registerLink }).isVisible()).resolves.toBe(true);

      await page.getByLabel(en.loginName).fill(name);
      await page.getByRole("button", { name: en.next }).click();
      await page.getByLabel(en.password).waitFor();
      await inspect("password", tab);

      await page.getByLabel(en.password).fill("wrong-password");
      await page.getByRole("button", { name: en.signIn }).click();
      const field = page.getByLabel(en.password);
      await expect(field.getAttribute("aria-invalid")).resolves.toBe("true");
      // The message is next to the field and describes it; the summary says it to screen readers.
      await expect(page.locator(`#${await field.getAttribute("aria-describedby")}`).innerText()).resolves.toBe(en.wrongPassword);
      await expect(page.getByRole("alert").innerText()).resolves.toBe(en.wrongPassword);
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("password");
      await inspect("password-error", tab);

      await page.getByRole("link", { name: en.forgotPassword }).click();
      await page.getByRole("button", { name: en.sendCode }).waitFor();
      await inspect("forgot-password", tab);
      await page.goBack();

      await page.getByLabel(en.password).fill(PASSWORD);
      await page.getByRole("button", { name: en.signIn }).click();
      await page.getByLabel(en.code, { exact: true }).waitFor();
      await inspect("second-factor", tab);
      await page.getByLabel(en.code, { exact: true }).fill(totpCode(secret, 1));
      await page.getByRole("button", { name: en.verify }).click();
      // A browser with an authenticator of its own is offered a passkey after a password.
      const notNow = page.getByRole("button", { name: en.notNow });
      await expect.poll(async () => new URL(page.url()).origin === new URL(CB).origin || (await notNow.isVisible()), { timeout: 30_000 }).toBe(true);
      if (await notNow.isVisible()) {
        await inspect("passkey-offer", tab);
        await notNow.click();
      }
      await page.waitForURL((u) => u.origin === new URL(CB).origin);

      await page.goto(authorizeUrl({ prompt: "select_account" }));
      await page.getByRole("button", { name }).waitFor();
      await inspect("select-account", tab);

      await page.goto(`${base()}/oidc/v1/end_session?client_id=${encodeURIComponent(config.clientMetadata().client_id)}`);
      await page.getByRole("button", { name: en.signOut }).waitFor();
      await inspect("sign-out", tab, false);
      await page.getByRole("button", { name: en.signOut }).click();
      await page.getByText(en.signedOut).waitFor();
      await inspect("signed-out", tab, false);
    } finally {
      await page.context().close();
    }
  }, 180_000);

  it("the steps a sign-in may ask for: setting up a second factor (QR code inside the CSP), a new password", async () => {
    const org = await createOrg(server, uniqueName("Forced"));
    await loginSettings({ forceMfa: { set: true } }, { orgId: org.id });
    const forced = await person({ orgId: org.id });
    const changing = await person({ mustChange: true });
    const signIn = async (name: string) => {
      const tab = await newPage();
      await tab.page.goto(authorizeUrl());
      await tab.page.getByLabel(en.loginName).fill(name);
      await tab.page.getByRole("button", { name: en.next }).click();
      await tab.page.getByLabel(en.password).fill(PASSWORD);
      await tab.page.getByRole("button", { name: en.signIn }).click();
      return tab;
    };
    const setup = await signIn(forced.name);
    try {
      await setup.page.getByRole("button", { name: en.factorTotp }).waitFor();
      await inspect("mfa-setup", setup);
      await setup.page.getByRole("button", { name: en.factorTotp }).click();
      const qr = setup.page.getByRole("img", { name: en.totpQrLabel });
      await qr.waitFor();
      const box = await qr.locator("svg").boundingBox();
      expect(box?.width, "the QR code is drawn").toBeGreaterThan(120);
      await inspect("totp-setup", setup);
    } finally {
      await setup.page.context().close();
    }
    const change = await signIn(changing.name);
    try {
      await change.page.getByLabel(en.newPassword, { exact: true }).waitFor();
      await inspect("new-password", change);
    } finally {
      await change.page.context().close();
    }
  }, 120_000);

  it("registration (with an error next to its field), email verification and the provider's error page", async () => {
    const tab = await newPage();
    const { page } = tab;
    try {
      await page.goto(authorizeUrl({ prompt: "create" }));
      await page.getByLabel(en.givenName).waitFor();
      await inspect("register", tab);
      const username = uniqueName("grace");
      await page.getByLabel(en.givenName).fill("Grace");
      await page.getByLabel(en.familyName).fill("Hopper");
      await page.getByLabel(en.email).fill(`${username}@mail.example`);
      await page.getByLabel(en.username).fill(username);
      await page.getByLabel(en.password, { exact: true }).fill(PASSWORD);
      await page.getByLabel(en.repeatPassword).fill(`${PASSWORD}x`);
      await page.getByRole("button", { name: en.registerButton }).click();
      const confirmation = page.getByLabel(en.repeatPassword);
      await expect(confirmation.getAttribute("aria-invalid")).resolves.toBe("true");
      await expect(page.locator("#passwordConfirmation-error").innerText()).resolves.toBe(en.passwordsDiffer);
      await inspect("register-error", tab);

      const { id } = await person();
      await page.goto(`${base()}/ui/login/email/verify?user=${id}&code=K7PX4QAB`);
      await inspect("verify-email", tab, false);

      await page.goto(authorizeUrl({ redirect_uri: "https://evil.example/cb" }));
      await page.getByRole("alert").waitFor();
      await inspect("error", tab, false);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("a branded organization's pages: its colors in each mode, its logo and font, login names without the domain, no watermark", async () => {
    const orgName = uniqueName("Teal");
    const org = await createOrg(server, orgName);
    const branding = protocolClient(PlatformBrandingSettings, "grpc", base());
    ok(
      await branding.call(
        "SetBrandingSettings",
        {
          settings: {
            primaryColor: { set: "#0f766e" },
            backgroundColor: { set: "#f0fdfa" },
            fontColor: { set: "#134e4a" },
            primaryColorDark: { set: "#5eead4" },
            backgroundColorDark: { set: "#042f2e" },
            fontColorDark: { set: "#f0fdfa" },
            hideLoginNameSuffix: { set: true },
            disableWatermark: { set: true },
            font: { set: "BRANDING_FONT_TRANSITIONAL" },
          },
          ctx: { orgId: org.id },
        },
        server.adminToken,
      ),
    );
    // A wordmark as a company would upload one (the README shows these pages): a mark and the name, in shapes.
    const logo = (fill: string) =>
      `<svg xmlns="http://www.w3.org/2000/svg" width="168" height="48" viewBox="0 0 168 48"><path d="M24 4 44 44H34l-4-9H18l-4 9H4L24 4Zm0 14-4 9h8l-4-9Z" fill="${fill}"/>` +
      `<text x="54" y="34" font-family="Georgia, 'DejaVu Serif', serif" font-size="28" font-weight="700" letter-spacing="2" fill="${fill}">ACME</text></svg>`;
    const urls: Record<string, string> = {};
    for (const [image, fill] of [
      ["logo", "#0f766e"],
      ["logo_dark", "#5eead4"],
    ] as const) {
      const set = ok(
        await branding.call(
          "SetBrandingImage",
          { image, content: { contentType: "image/svg+xml", data: Buffer.from(logo(fill)).toString("base64") }, ctx: { orgId: org.id } },
          server.adminToken,
        ),
      );
      urls[image] = set.url as string;
    }
    // A real-looking person: once per server, as each database kind has its own.
    const { name } = await person({ orgId: org.id, name: "ada.lovelace" });
    const loginName = `${name}@${org.primary}`;

    const tab = await newPage();
    const { page } = tab;
    const looks = () =>
      page.evaluate(() => {
        const img = document.querySelector<PageImage>("main .brand img");
        return {
          button: getComputedStyle(document.querySelector("button")!).backgroundColor,
          body: getComputedStyle(document.body).fontFamily,
          logo: img && { src: new URL(img.currentSrc).pathname, loaded: img.complete && img.naturalWidth > 0 },
          watermark: document.querySelector("footer") !== null,
        };
      });
    try {
      await page.goto(authorizeUrl());
      await expect(looks(), "the default organization keeps the built-in look").resolves.toMatchObject({
        button: "rgb(84, 105, 212)",
        logo: null,
        watermark: true,
      });

      await page.goto(authorizeUrl({ scope: `openid urn:platform:iam:org:id:${org.id}` }));
      await page.getByLabel(en.loginName).waitFor();
      await expect(looks()).resolves.toMatchObject({ button: "rgb(15, 118, 110)", logo: { src: urls.logo, loaded: true }, watermark: false });
      // The login is the organization's: its name is the logo's text, not the instance's.
      await expect(page.locator("main .brand img").getAttribute("alt")).resolves.toBe(orgName);
      expect((await looks()).body).toMatch(/^Charter,/);
      await page.emulateMedia({ colorScheme: "dark" });
      // The picture switches to the dark logo once it has loaded.
      await expect.poll(looks).toMatchObject({ button: "rgb(94, 234, 212)", logo: { src: urls.logo_dark, loaded: true } });
      await page.emulateMedia({ colorScheme: "light" });
      await inspect("branded-login-name", tab);

      await page.getByLabel(en.loginName).fill(loginName);
      await page.getByRole("button", { name: en.next }).click();
      await page.getByLabel(en.password).waitFor();
      await expect(page.locator(".account").innerText(), "shown without @domain").resolves.toBe(name);
      await expect(page.locator('input[name="loginName"]').inputValue(), "signed in with the whole name").resolves.toBe(loginName);
      await inspect("branded-password", tab);
      await page.getByLabel(en.password).fill(PASSWORD);
      await page.getByRole("button", { name: en.signIn }).click();
      await page.waitForURL((u) => u.origin === new URL(CB).origin);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
