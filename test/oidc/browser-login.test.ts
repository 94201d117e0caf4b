import { existsSync } from "node:fs";
import * as client from "openid-client";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appClient, createProject, oidc } from "../apps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, uniqueName, Users } from "../users/helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const REDIRECT = "https://rp.example/callback";
const PASSWORD = "Corr3ct-horse!";

/**
 * A person signs in on the login pages in a real browser (Debian's chromium, driven by
 * playwright-core), finding fields by their labels as a person would, in the language the
 * browser or the application asks for. .ci/run installs chromium; elsewhere it may be missing.
 */
describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`sign-in in a real browser on %s (skipped when ${CHROMIUM} is missing: apt-get install chromium, or set CHROMIUM_PATH)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let config: client.Configuration;

  beforeAll(async () => {
    server = await startTestServer(kind);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const projectId = await createProject(server.baseUrl, server.adminToken, "browser");
    const app = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", { projectId, app: { name: "web", oidc: oidc({ redirectUris: [REDIRECT] }) } });
    config = await client.discovery(new URL(server.baseUrl), app.clientId, app.clientSecret, undefined, { execute: [client.allowInsecureRequests] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Signs in through the pages; returns the page's language and the callback URL the browser was sent to. */
  async function signIn(opts: { locale: string; uiLocales?: string; labels: { loginName: string; password: string; next: string; signIn: string } }) {
    const loginName = uniqueName("person");
    const userId = await new Users(server).create(humanUser(loginName, { password: PASSWORD }));
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: "openid profile",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: "browser",
      ...(opts.uiLocales && { ui_locales: opts.uiLocales }),
    });
    const context = await browser.newContext({ locale: opts.locale });
    const page = await context.newPage();
    let callback: URL | undefined;
    await page.route(`${new URL(REDIRECT).origin}/**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
    });
    try {
      await page.goto(url.href);
      const lang = await page.locator("html").getAttribute("lang");
      await page.getByLabel(opts.labels.loginName).fill(loginName);
      await page.getByRole("button", { name: opts.labels.next }).click();
      await page.getByLabel(opts.labels.password).fill(PASSWORD);
      await page.getByRole("button", { name: opts.labels.signIn }).click();
      await page.waitForURL((u) => u.origin === new URL(REDIRECT).origin);
      const tokens = await client.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: "browser" });
      return { lang, sub: tokens.claims()!.sub, userId };
    } finally {
      await context.close();
    }
  }

  it("in the browser's language (German by Accept-Language)", async () => {
    const result = await signIn({ locale: "de-DE", labels: { loginName: "Loginname", password: "Passwort", next: "Weiter", signIn: "Anmelden" } });
    expect(result.lang).toBe("de");
    expect(result.sub).toBe(result.userId);
  });

  it("in the language the application asks for (French by ui_locales), over the browser's", async () => {
    const result = await signIn({ locale: "en-US", uiLocales: "fr-CA en", labels: { loginName: "Nom de connexion", password: "Mot de passe", next: "Suivant", signIn: "Se connecter" } });
    expect(result.lang).toBe("fr");
    expect(result.sub).toBe(result.userId);
  });
});
