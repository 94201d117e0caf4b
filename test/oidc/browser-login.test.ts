import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as client from "openid-client";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_CODE, BASIC, BEARER, WEB, appClient, createProject, oidc } from "../apps/helpers.js";
import { idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, uniqueName, Users } from "../users/helpers.js";
import { testCertificates, TestSmtpServer } from "../notification-providers/fakes.js";
import { until } from "../support/until.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { protocolClient } from "../support/clients.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const REDIRECT = "https://rp.example/callback";
const PASSWORD = "Corr3ct-horse!";

/** The instance's login setting require_verified_email, as its administrator sets it. */
async function requireVerifiedEmail(server: TestServer, on: boolean) {
  const r = await protocolClient(PlatformLoginSettings, "connect", server.baseUrl).call(
    "SetLoginSettings",
    { settings: { requireVerifiedEmail: on ? { set: true } : { reset: true } } },
    server.adminToken,
  );
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
}

/**
 * A person signs in on the login pages in a real browser (Debian's chromium, driven by
 * playwright-core), finding fields by their labels as a person would, in the language the
 * browser or the application asks for. .ci/run installs chromium; elsewhere it may be missing.
 */
describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(
  `sign-in in a real browser on %s (skipped when ${CHROMIUM} is missing: apt-get install chromium, or set CHROMIUM_PATH)`,
  (kind) => {
    let server: TestServer;
    /** An upstream identity provider for the external login: a second service, on 127.0.0.1 (cookies are per host, not per port). */
    let upstream: TestServer;
    let browser: Browser;
    let config: client.Configuration;
    let smtp: TestSmtpServer;
    let certificatesDir: string;

    beforeAll(async () => {
      certificatesDir = await mkdtemp(join(tmpdir(), "browser-smtp-"));
      const certificates = await testCertificates(certificatesDir);
      smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
      const mail = {
        PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${await smtp.start()}`,
        PLATFORM_SMTP_FROM: "noreply@platform.example",
        PLATFORM_SMTP_CA_PATH: certificates.caPath,
        PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
        PLATFORM_PASSWORD_RESET_ANSWER_TIME: "0ms",
      };
      [server, upstream] = await Promise.all([startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", ...mail }), startTestServer(kind)]);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
      });
      const upstreamBase = upstream.baseUrl.replace("localhost", "127.0.0.1");
      const upProject = await createProject(upstream.baseUrl, upstream.adminToken, "downstream");
      const upApp = await appClient(upstream.baseUrl, upstream.adminToken).ok("CreateApp", {
        projectId: upProject,
        app: {
          name: "downstream",
          oidc: oidc({
            redirectUris: [`${server.baseUrl}/ui/login/idp/callback`],
            appType: WEB,
            authMethodType: BASIC,
            grantTypes: [AUTH_CODE],
            accessTokenType: BEARER,
            devMode: true,
          }),
        },
      });
      await idpClient(server.baseUrl, server.adminToken).ok("CreateOIDCIDP", {
        idp: {
          idp: { name: "Upstream", options: { isAutoCreation: true } },
          config: { clientId: upApp.clientId, clientSecret: upApp.clientSecret, issuer: upstreamBase, scopes: ["openid", "profile", "email"] },
        },
      });
      const projectId = await createProject(server.baseUrl, server.adminToken, "browser");
      const app = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
        projectId,
        app: { name: "web", oidc: oidc({ redirectUris: [REDIRECT] }) },
      });
      config = await client.discovery(new URL(server.baseUrl), app.clientId, app.clientSecret, undefined, { execute: [client.allowInsecureRequests] });
    });
    afterAll(async () => {
      await browser?.close();
      await Promise.all([server?.close(), upstream?.close()]);
      await smtp?.close();
      await rm(certificatesDir, { recursive: true, force: true });
    });

    /**
     * An authorization request opened in a fresh browser context, the pages driven by `drive`,
     * and the code the browser brings back to the relying party exchanged for tokens.
     */
    async function authorizeIn(locale: string, extra: Record<string, string>, drive: (page: Page) => Promise<void>) {
      const verifier = client.randomPKCECodeVerifier();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: "openid profile",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state: "browser",
        ...extra,
      });
      const context = await browser.newContext({ locale });
      const page = await context.newPage();
      let callback: URL | undefined;
      await page.route(`${new URL(REDIRECT).origin}/**`, async (route) => {
        callback = new URL(route.request().url());
        await route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
      });
      try {
        await page.goto(url.href);
        await drive(page);
        await page.waitForURL((u) => u.origin === new URL(REDIRECT).origin);
        return { tokens: await client.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: "browser" }) };
      } finally {
        await context.close();
      }
    }

    /** Signs in through the pages; returns the page's language and whom the tokens name. */
    async function signIn(opts: {
      locale: string;
      uiLocales?: string;
      loginName?: string;
      password?: string;
      labels: { loginName: string; password: string; next: string; signIn: string };
    }) {
      const loginName = opts.loginName ?? uniqueName("person");
      const userId = opts.loginName ? undefined : await new Users(server).create(humanUser(loginName, { password: PASSWORD }));
      let lang: string | null = null;
      const { tokens } = await authorizeIn(opts.locale, opts.uiLocales ? { ui_locales: opts.uiLocales } : {}, async (page) => {
        lang = await page.locator("html").getAttribute("lang");
        await page.getByLabel(opts.labels.loginName).fill(loginName);
        await page.getByRole("button", { name: opts.labels.next }).click();
        await page.getByLabel(opts.labels.password).fill(opts.password ?? PASSWORD);
        await page.getByRole("button", { name: opts.labels.signIn }).click();
      });
      return { lang, sub: tokens.claims()!.sub, userId };
    }

    it("in the browser's language (German by Accept-Language)", async () => {
      const result = await signIn({ locale: "de-DE", labels: { loginName: "Anmeldename", password: "Passwort", next: "Weiter", signIn: "Anmelden" } });
      expect(result.lang).toBe("de");
      expect(result.sub).toBe(result.userId);
    });

    it("in the language the application asks for (French by ui_locales), over the browser's", async () => {
      const result = await signIn({
        locale: "en-US",
        uiLocales: "fr-CA en",
        labels: { loginName: "Identifiant", password: "Mot de passe", next: "Suivant", signIn: "Se connecter" },
      });
      expect(result.lang).toBe("fr");
      expect(result.sub).toBe(result.userId);
    });

    /** The first code of the newest mail to an address, and the mail's link. */
    async function mailedCode(address: string, path: string) {
      const mail = await until(`a mail to ${address}`, () => smtp.delivered.filter((d) => d.to.includes(address) && (d.mail.text ?? "").includes(path)).at(-1));
      const link = new RegExp(`http://localhost(${path}\\?\\S+)`).exec(mail.mail.text ?? "")![1]!;
      return { code: new URL(link, server.baseUrl).searchParams.get("code")!, link };
    }

    it("resets a forgotten password in German: the code from the email and a new password sign the person in", async () => {
      const de = TEXTS.de;
      const loginName = uniqueName("forgot");
      const userId = await new Users(server).create(humanUser(loginName, { password: PASSWORD }));
      const { tokens } = await authorizeIn("de-DE", {}, async (page) => {
        await page.getByLabel(de.loginName).fill(loginName);
        await page.getByRole("button", { name: de.next }).click();
        await page.getByRole("link", { name: de.forgotPassword }).click();
        expect(await page.getByLabel(de.loginName).inputValue()).toBe(loginName);
        await page.getByRole("button", { name: de.sendCode }).click();
        await page.getByText(de.resetCodeSent).waitFor();
        const { code } = await mailedCode(`${loginName}@mail.example`, "/ui/login/password/reset");
        await page.getByLabel(de.code, { exact: true }).fill(code);
        await page.getByLabel(de.newPassword, { exact: true }).fill("N3w-Passwort!");
        await page.getByLabel(de.confirmPassword).fill("N3w-Passwort!");
        await page.getByRole("button", { name: de.setPassword }).click();
      });
      expect(tokens.claims()!.sub).toBe(userId);
    });

    it("accepts an invitation in French: the page the email links to sets the first password", async () => {
      const fr = TEXTS.fr;
      const loginName = uniqueName("invited");
      await new Users(server).create(humanUser(loginName, {}, { preferredLanguage: "fr" }));
      const { link } = await mailedCode(`${loginName}@mail.example`, "/ui/login/invite");
      const context = await browser.newContext({ locale: "en-US" });
      try {
        const page = await context.newPage();
        await page.goto(`${server.baseUrl}${link}`);
        expect(await page.locator("html").getAttribute("lang")).toBe("fr");
        await page.getByLabel(fr.newPassword, { exact: true }).fill("Pr3mier-mot!");
        await page.getByLabel(fr.confirmPassword).fill("Pr3mier-mot!");
        await page.getByRole("button", { name: fr.setPassword }).click();
        await page.getByText(fr.passwordSet).waitFor();
      } finally {
        await context.close();
      }
      const result = await signIn({
        locale: "fr-FR",
        loginName,
        password: "Pr3mier-mot!",
        labels: { loginName: fr.loginName, password: fr.password, next: fr.next, signIn: fr.signIn },
      });
      expect(result.lang).toBe("fr");
    });

    it("asks for the emailed code when the login settings require a verified email, in Spanish; the message's link page verifies too", async () => {
      const es = TEXTS.es;
      await requireVerifiedEmail(server, true);
      try {
        const loginName = uniqueName("verify");
        const address = `${loginName}@mail.example`;
        const userId = await new Users(server).create(humanUser(loginName, { password: PASSWORD }));
        const sentBefore = () => smtp.delivered.filter((d) => d.to.includes(address)).length;
        const { tokens } = await authorizeIn("es-ES", {}, async (page) => {
          await page.getByLabel(es.loginName).fill(loginName);
          await page.getByRole("button", { name: es.next }).click();
          await page.getByLabel(es.password).fill(PASSWORD);
          const before = sentBefore();
          await page.getByRole("button", { name: es.signIn }).click();
          await page.getByText(es.verifyEmailIntro).waitFor();
          // The step sends a code of its own, which replaces the one of the creation.
          await until("the step's mail", () => sentBefore() > before);
          const { code } = await mailedCode(address, "/ui/login/email/verify");
          await page.getByLabel(es.code, { exact: true }).fill(code);
          await page.getByRole("button", { name: es.verify }).click();
        });
        expect(tokens.claims()!.sub).toBe(userId);
      } finally {
        await requireVerifiedEmail(server, false);
      }

      const other = uniqueName("link");
      await new Users(server).create(humanUser(other, { password: PASSWORD }, { preferredLanguage: "es" }));
      const { link } = await mailedCode(`${other}@mail.example`, "/ui/login/email/verify");
      const context = await browser.newContext({ locale: "en-US" });
      try {
        const page = await context.newPage();
        await page.goto(`${server.baseUrl}${link}`);
        await page.getByRole("button", { name: es.verify }).click();
        await page.getByText(es.emailVerified).waitFor();
      } finally {
        await context.close();
      }
    });

    it("through an external identity provider: the browser that started the login finishes it", async () => {
      const loginName = uniqueName("upstream");
      const email = `${loginName}@upstream.example`;
      await new Users(upstream).create(
        humanUser(loginName, { password: PASSWORD, email: { address: email, isVerified: true } }, { givenName: "Uma", familyName: "Stream" }),
      );
      let bindings: string[] = [];
      const { tokens } = await authorizeIn("en-US", {}, async (page) => {
        await page.getByRole("button", { name: "Sign in with Upstream" }).click();
        // The upstream's own pages, on its host.
        await page.waitForURL((u) => u.host === new URL(upstream.baseUrl.replace("localhost", "127.0.0.1")).host);
        await page.getByLabel("Login name").fill(loginName);
        await page.getByRole("button", { name: "Next" }).click();
        await page.getByLabel("Password").fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL((u) => u.origin === new URL(REDIRECT).origin);
        bindings = (await page.context().cookies(server.baseUrl)).map((c) => c.name).filter((n) => n.startsWith("platform_idp_"));
      });
      // The binding cookie was scoped to the callback and is gone after it.
      expect(bindings).toEqual([]);
      const created = await new Users(server).get(tokens.claims()!.sub);
      expect(created.human.email).toMatchObject({ address: email, isVerified: true });
    });
  },
);
