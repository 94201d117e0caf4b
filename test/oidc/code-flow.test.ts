import { decodeJwt, decodeProtectedHeader } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import {
  API_BASIC,
  AUTH_CODE,
  BASIC,
  BEARER,
  CODE,
  ID_TOKEN,
  ID_TOKEN_TOKEN,
  IMPLICIT,
  JWT,
  NATIVE,
  NONE,
  POST,
  REFRESH,
  USER_AGENT,
  WEB,
  appClient,
  oidc,
  projectClient,
} from "../apps/helpers.js";
import { clients as grantClients } from "../grants/helpers.js";
import { languageClient } from "../settings/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, createOrg, humanUser, ok, uniqueName } from "../users/helpers.js";
import { Browser, alertText, formWith, htmlLang, parseForms, unescapeHtml, type Page } from "./browser.js";

/*
 * Black-box tests of the authorization endpoint with the login pages (src/oidc/login/), the
 * code, implicit and refresh-token grants of applications, the claims of their tokens,
 * revocation and end session — driven like a browser (test/oidc/browser.ts) and a relying
 * party (openid-client).
 */

const PASSWORD = "Corr3ct-horse!";
const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const ROLES = "urn:platform:iam:org:project:roles";
const RP = "https://rp.example";
const CB = `${RP}/cb`;
const LOGGED_OUT = `${RP}/logged-out`;
const en = TEXTS.en;

interface App {
  clientId: string;
  clientSecret?: string;
  config: client.Configuration;
  redirectUri: string;
}

interface Started {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

describe.each(DATABASE_KINDS)("authorization code flow with the login pages (%s)", (kind) => {
  let server: TestServer;
  let meta: client.ServerMetadata;
  let users: Users;
  let projectId: string;
  let api: { clientId: string; clientSecret: string };
  let alice: { id: string; name: string };
  let orgDomain: string;
  /** code, BASIC, JWT access tokens with role assertion, refresh; two redirect URIs; post-logout URI. */
  let basicApp: App;
  /** code, POST, opaque, refresh, userinfo and roles in the ID token. */
  let postApp: App;
  /** code, NONE (public), opaque. */
  let publicApp: App;
  /** implicit: id_token and "id_token token", https redirect. */
  let implicitApp: App;

  const base = () => server.baseUrl;

  async function createApp(name: string, config: Record<string, unknown>, auth: "basic" | "post" | "none", project = projectId): Promise<App> {
    const made = await appClient(base(), server.adminToken).ok("CreateApp", { projectId: project, app: { name, oidc: oidc(config as never) } });
    const clientId = made.clientId as string;
    const clientSecret = made.clientSecret as string | undefined;
    const method = auth === "basic" ? client.ClientSecretBasic(clientSecret!) : auth === "post" ? client.ClientSecretPost(clientSecret!) : client.None();
    const c = new client.Configuration(meta, clientId, clientSecret ? { client_secret: clientSecret } : {}, method);
    client.allowInsecureRequests(c);
    return { clientId, ...(clientSecret && { clientSecret }), config: c, redirectUri: (config.redirectUris as string[])[0]! };
  }

  /** An authorization request of the app (code + S256 unless told otherwise). */
  async function start(app: App, params: Record<string, string | undefined> = {}): Promise<Started> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const query: Record<string, string | undefined> = {
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      response_type: "code",
      scope: "openid",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...params,
    };
    const url = new URL("/oauth/v2/authorize", base());
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    return { url: url.href, state, nonce, verifier };
  }

  /** Login name, then password, on the pages the request leads to; the page after the password. */
  async function signIn(b: Browser, url: string, loginName: string, password = PASSWORD): Promise<Page> {
    let page = await b.open(url);
    expect(page.status, page.html).toBe(200);
    expect(page.url).toMatch(new RegExp(`^${base()}/ui/login/[^/]+$`));
    page = await b.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    expect(page.status, page.html).toBe(200);
    return b.submit(formWith(page.html, "password"), { password }, page.url);
  }

  /** The whole code flow for a user and the tokens; the browser keeps its session. */
  async function codeFlow(app: App, params: Record<string, string | undefined> = {}, b = new Browser(base()), loginName = alice.name) {
    const s = await start(app, params);
    const page = await signIn(b, s.url, loginName);
    expect(page.left, page.html).toBe(true);
    const tokens = await client.authorizationCodeGrant(app.config, new URL(page.url), {
      pkceCodeVerifier: s.verifier,
      expectedState: s.state,
      idTokenExpected: true,
    });
    return { tokens, browser: b, redirect: new URL(page.url) };
  }

  async function introspect(token: string) {
    const res = await fetch(`${base()}/oauth/v2/introspect`, {
      method: "POST",
      headers: { authorization: basicAuth(api.clientId, api.clientSecret), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  const userinfoStatus = async (token: string) => (await fetch(`${base()}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** The parameters of a redirect to the client (query or fragment). */
  const params = (url: string) => {
    const u = new URL(url);
    return Object.fromEntries(new URLSearchParams(u.hash ? u.hash.slice(1) : u.search));
  };

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS: "3",
      PLATFORM_LOGIN_RATE_PER_IP: "100000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000",
    });
    const discovered = await client.discovery(new URL(base()), "discovery", undefined, undefined, { execute: [client.allowInsecureRequests] });
    meta = discovered.serverMetadata();
    users = new Users(server);
    alice = { name: uniqueName("alice"), id: "" };
    alice.id = await users.create(humanUser(alice.name, { password: PASSWORD }, { nickName: "Ally" }));
    const made = await projectClient(base(), server.adminToken).ok("CreateProject", { project: { name: "shop", projectRoleAssertion: true } });
    projectId = made.details.id as string;
    const g = grantClients(base(), server.adminToken);
    for (const key of ["admin", "viewer"]) await g.projects.ok("AddProjectRole", { projectId, role: { key, displayName: key } });
    await g.grants.ok("CreateUserGrant", { projectId, grant: { userId: alice.id, roleKeys: ["admin"] } });
    const org = await g.orgs.ok("GetOrganization", { id: server.defaultOrgId });
    orgDomain = org.organization.primaryDomain as string;
    const apiApp = await appClient(base(), server.adminToken).ok("CreateApp", { projectId, app: { name: "introspector", api: { authMethodType: API_BASIC } } });
    api = { clientId: apiApp.clientId, clientSecret: apiApp.clientSecret };
    basicApp = await createApp(
      "basic",
      {
        redirectUris: [CB, `${RP}/cb2`],
        postLogoutRedirectUris: [LOGGED_OUT],
        appType: WEB,
        authMethodType: BASIC,
        grantTypes: [AUTH_CODE, REFRESH],
        accessTokenType: JWT,
        accessTokenRoleAssertion: true,
      },
      "basic",
    );
    postApp = await createApp(
      "post",
      {
        redirectUris: [CB],
        postLogoutRedirectUris: [LOGGED_OUT],
        appType: WEB,
        authMethodType: POST,
        grantTypes: [AUTH_CODE, REFRESH],
        accessTokenType: BEARER,
        idTokenUserinfoAssertion: true,
        idTokenRoleAssertion: true,
      },
      "post",
    );
    publicApp = await createApp(
      "public",
      { redirectUris: [`${RP}/native`], appType: NATIVE, authMethodType: NONE, grantTypes: [AUTH_CODE, REFRESH], accessTokenType: BEARER },
      "none",
    );
    implicitApp = await createApp(
      "implicit",
      {
        redirectUris: [`${RP}/implicit`],
        appType: USER_AGENT,
        authMethodType: NONE,
        responseTypes: [ID_TOKEN, ID_TOKEN_TOKEN],
        grantTypes: [IMPLICIT],
        accessTokenType: BEARER,
      },
      "none",
    );
  }, 120_000);
  afterAll(() => server?.close());

  describe("code flow and PKCE", () => {
    it("signs in through the pages and exchanges the code (BASIC, JWT access token with the audience list)", async () => {
      const { tokens, redirect } = await codeFlow(basicApp, { scope: `openid profile email ${PLATFORM_SCOPE}` });
      expect(redirect.origin + redirect.pathname).toBe(CB);
      expect(redirect.searchParams.get("iss")).toBe(base());
      expect(redirect.searchParams.get("code")).toBeTruthy();
      const id = tokens.claims()!;
      expect(id).toMatchObject({ iss: base(), sub: alice.id, aud: basicApp.clientId });
      expect(decodeProtectedHeader(tokens.access_token).typ).toBe("at+jwt");
      const at = decodeJwt(tokens.access_token);
      expect(at.sub).toBe(alice.id);
      expect(at.aud).toEqual([basicApp.clientId, projectId, "platform"]);
      expect(tokens.refresh_token).toBeUndefined();
    });

    it("works for POST and for a public client with PKCE (opaque access tokens)", async () => {
      for (const app of [postApp, publicApp]) {
        const { tokens } = await codeFlow(app);
        expect(tokens.claims()!.sub).toBe(alice.id);
        expect(tokens.access_token.split(".").length, "opaque").not.toBe(3);
        expect(await userinfoStatus(tokens.access_token)).toBe(200);
      }
    });

    it("refuses a public client without PKCE and the plain method, at its redirect URI", async () => {
      const b = new Browser(base());
      const without = await start(publicApp, { code_challenge: undefined, code_challenge_method: undefined });
      let page = await b.open(without.url);
      expect(page.left).toBe(true);
      expect(page.url.startsWith(`${RP}/native?`)).toBe(true);
      expect(params(page.url)).toMatchObject({ error: "invalid_request", state: without.state });
      expect(params(page.url).error_description).toBeTruthy();
      const plain = await start(publicApp, { code_challenge: "a".repeat(43), code_challenge_method: "plain" });
      page = await b.open(plain.url);
      expect(page.left).toBe(true);
      expect(params(page.url)).toMatchObject({ error: "invalid_request", state: plain.state });
    });

    it("refuses a code redeemed with the wrong verifier; a code used twice is refused and ends its tokens", async () => {
      const b = new Browser(base());
      const s = await start(basicApp);
      const page = await signIn(b, s.url, alice.name);
      await expect(
        client.authorizationCodeGrant(basicApp.config, new URL(page.url), { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: s.state }),
      ).rejects.toMatchObject({ error: "invalid_grant" });
      // Without a verifier at all.
      const code = new URL(page.url).searchParams.get("code")!;
      const bare = await fetch(`${base()}/oauth/v2/token`, {
        method: "POST",
        headers: { authorization: basicAuth(basicApp.clientId, basicApp.clientSecret!), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CB }),
      });
      expect(bare.status).toBe(400);
      expect(((await bare.json()) as { error: string }).error).toBe("invalid_grant");
      const tokens = await client.authorizationCodeGrant(basicApp.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
      expect((await introspect(tokens.access_token)).active).toBe(true);
      await expect(
        client.authorizationCodeGrant(basicApp.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state }),
      ).rejects.toMatchObject({ error: "invalid_grant" });
      // RFC 6749 section 4.1.2: the tokens issued for a code presented twice are revoked.
      expect((await introspect(tokens.access_token)).active).toBe(false);
    });

    it("refuses a code at another client and at another redirect_uri", async () => {
      const b = new Browser(base());
      const s = await start(basicApp);
      const page = await signIn(b, s.url, alice.name);
      const code = new URL(page.url).searchParams.get("code")!;
      const redeem = (auth: string, redirect: string) =>
        fetch(`${base()}/oauth/v2/token`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: s.verifier }),
        });
      const wrongUri = await redeem(basicAuth(basicApp.clientId, basicApp.clientSecret!), `${RP}/cb2`);
      expect(wrongUri.status).toBe(400);
      expect(((await wrongUri.json()) as { error: string }).error).toBe("invalid_grant");
      const otherClient = await fetch(`${base()}/oauth/v2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: CB,
          code_verifier: s.verifier,
          client_id: postApp.clientId,
          client_secret: postApp.clientSecret!,
        }),
      });
      expect(otherClient.status).toBe(400);
      expect(((await otherClient.json()) as { error: string }).error).toBe("invalid_grant");
      const wrongSecret = await redeem(basicAuth(basicApp.clientId, "not-the-secret"), CB);
      expect(wrongSecret.status).toBe(401);
      expect(((await wrongSecret.json()) as { error: string }).error).toBe("invalid_client");
    });
  });

  describe("login pages", () => {
    it("serves plain, safe HTML with SameSite=Lax interaction cookies", async () => {
      const s = await start(basicApp);
      const first = await fetch(s.url, { redirect: "manual" });
      expect(first.status).toBe(303);
      expect(first.headers.get("location")).toMatch(/^\/ui\/login\/[^/]+$/);
      const cookies = first.headers.getSetCookie();
      const interaction = cookies.filter((c) => c.startsWith("_interaction="));
      expect(interaction.length, cookies.join("\n")).toBeGreaterThan(0);
      for (const c of interaction) expect(c.toLowerCase()).toContain("samesite=lax");
      for (const c of interaction) expect(c.toLowerCase()).toContain("httponly");
      const b = new Browser(base());
      const page = await b.open(s.url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      // Scripts only from the service itself (the passkey script), none inline: data blocks only.
      expect(/(?:^|;)\s*script-src ([^;]*)/.exec(csp)?.[1]?.trim()).toBe("'self'");
      for (const m of page.html.matchAll(/<script\b([^>]*)>/gi)) expect(m[1]).toMatch(/type="application\/json"|src="\/ui\/login\/assets\//);
      expect(htmlLang(page.html)).toBe("en");
      const form = formWith(page.html, "loginName");
      expect(form.method).toBe("post");
      expect(form.fields.csrf).toBeTruthy();
      expect(form.fields.loginName).toBe("");
      expect(page.html).toContain('<button type="submit">');
      expect(new URL(form.action, page.url).pathname).toBe(`${new URL(page.url).pathname}/loginname`);
    });

    it("prefills the login name from login_hint (escaped)", async () => {
      const b = new Browser(base());
      let page = await b.open((await start(basicApp, { login_hint: alice.name })).url);
      expect(formWith(page.html, "loginName").fields.loginName).toBe(alice.name);
      page = await b.open((await start(basicApp, { login_hint: `"><script>x</script>` })).url);
      expect(page.html).not.toContain("<script>x");
      expect(formWith(page.html, "loginName").fields.loginName).toBe(`"><script>x</script>`);
    });

    it("accepts the login name as username@primary-domain, case-insensitively", async () => {
      const s = await start(basicApp);
      const page = await signIn(new Browser(base()), s.url, `${alice.name.toUpperCase()}@${orgDomain}`);
      expect(page.left, page.html).toBe(true);
      expect(params(page.url).code).toBeTruthy();
    });

    it("shows the password form, then 401 for a wrong password and for an unknown user", async () => {
      const b = new Browser(base());
      let page = await b.open((await start(basicApp)).url);
      const loginUrl = page.url;
      page = await b.submit(formWith(page.html, "loginName"), { loginName: alice.name }, page.url);
      const pwForm = formWith(page.html, "password");
      expect(pwForm.fields.loginName).toBe(alice.name);
      expect(pwForm.fields.csrf).toBeTruthy();
      expect(pwForm.visible).toEqual(["password"]);
      expect(new URL(pwForm.action, page.url).pathname).toBe(`${new URL(loginUrl).pathname}/password`);
      page = await b.submit(pwForm, { password: "wrong-Passw0rd!" }, page.url);
      expect(page.status).toBe(401);
      expect(page.left).toBe(false);
      expect(alertText(page.html)).toBe(en.wrongPassword);
      expect(formWith(page.html, "password").fields.loginName).toBe(alice.name);
      // The right one still works afterwards (and clears the count).
      page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
      expect(page.left, page.html).toBe(true);

      const other = new Browser(base());
      page = await other.open((await start(basicApp)).url);
      page = await other.submit(formWith(page.html, "loginName"), { loginName: "nobody-at-all" }, page.url);
      expect(page.status).toBe(401);
      expect(alertText(page.html)).toBe(en.unknownUser);
      expect(formWith(page.html, "loginName").fields.loginName).toBe("nobody-at-all");
      // Straight to the password step with an unknown name: the same answer, no password form.
      const form = formWith(page.html, "loginName");
      page = await other.open(new URL(form.action.replace(/loginname$/, "password"), page.url), {
        method: "POST",
        form: { csrf: form.fields.csrf!, loginName: "nobody-at-all", password: "x" },
      });
      expect(page.status).toBe(401);
      expect(alertText(page.html)).toBe(en.unknownUser);
    });

    it("refuses a form with a bad csrf token (403) and another interaction's token", async () => {
      const b = new Browser(base());
      let page = await b.open((await start(basicApp)).url);
      const form = formWith(page.html, "loginName");
      page = await b.submit(form, { loginName: alice.name, csrf: "forged" }, page.url);
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.formExpired);
      page = await b.submit(form, { loginName: alice.name, csrf: "" }, page.url);
      expect(page.status).toBe(403);
      const second = await b.open((await start(basicApp)).url);
      const otherCsrf = formWith(second.html, "loginName").fields.csrf!;
      expect(otherCsrf).not.toBe(form.fields.csrf);
      // The first interaction's form with the second's token.
      const firstAgain = await b.open((await start(basicApp)).url);
      page = await b.submit(formWith(firstAgain.html, "loginName"), { loginName: alice.name, csrf: otherCsrf }, firstAgain.url);
      expect(page.status).toBe(403);
    });

    it("answers a login page without the interaction's cookie with an error page, not a form", async () => {
      const b = new Browser(base());
      const page = await b.open((await start(basicApp)).url);
      const stranger = new Browser(base());
      const other = await stranger.open(page.url);
      expect(other.status).toBe(400);
      expect(parseForms(other.html)).toEqual([]);
      expect(alertText(other.html)).toBe(en.loginExpired);
    });

    it("locks the user after 3 wrong passwords in a row (403, state locked)", async () => {
      const name = uniqueName("bob");
      const id = await users.create(humanUser(name, { password: PASSWORD }));
      const b = new Browser(base());
      let page = await b.open((await start(basicApp)).url);
      page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
      for (let i = 1; i <= 2; i++) {
        page = await b.submit(formWith(page.html, "password"), { password: `wrong-${i}-Passw0rd!` }, page.url);
        expect(page.status).toBe(401);
      }
      expect((await users.get(id)).state).toBe("USER_STATE_ACTIVE");
      page = await b.submit(formWith(page.html, "password"), { password: "wrong-3-Passw0rd!" }, page.url);
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.userLocked);
      expect((await users.get(id)).state).toBe("USER_STATE_LOCKED");
      // Locked: the right password does not get in, in this or a new interaction.
      const fresh = new Browser(base());
      page = await fresh.open((await start(basicApp)).url);
      page = await fresh.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.userLocked);
      const form = formWith(page.html, "loginName");
      page = await fresh.open(new URL(form.action.replace(/loginname$/, "password"), page.url), {
        method: "POST",
        form: { csrf: form.fields.csrf!, loginName: name, password: PASSWORD },
      });
      expect(page.status).toBe(403);
      expect(page.left).toBe(false);
    });

    it("counts wrong passwords in a row only: a success in between starts again", async () => {
      const name = uniqueName("carol");
      const id = await users.create(humanUser(name, { password: PASSWORD }));
      for (let round = 0; round < 2; round++) {
        const b = new Browser(base());
        let page = await b.open((await start(basicApp)).url);
        page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
        for (let i = 0; i < 2; i++) page = await b.submit(formWith(page.html, "password"), { password: "nope-Passw0rd!" }, page.url);
        expect(page.status).toBe(401);
        page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
        expect(page.left).toBe(true);
      }
      expect((await users.get(id)).state).toBe("USER_STATE_ACTIVE");
    });

    it("asks for a new password when the password must change, then signs in with it", async () => {
      const name = uniqueName("dave");
      const id = await users.create(humanUser(name, { password: PASSWORD, passwordChangeRequired: true }));
      expect((await users.get(id)).human.passwordChangeRequired).toBe(true);
      const b = new Browser(base());
      const s = await start(basicApp);
      let page = await signIn(b, s.url, name);
      expect(page.status).toBe(200);
      expect(page.left).toBe(false);
      let form = formWith(page.html, "newPassword");
      // Asked after every factor of the sign-in, so the current password is not asked again.
      expect(form.visible).toEqual(["newPassword", "newPasswordConfirmation"]);
      expect(form.fields.csrf).toBeTruthy();
      expect(form.action).toMatch(/\/newpassword$/);
      expect(page.html).toContain(en.changePasswordTitle);
      // Confirmation differs: 400, still required.
      page = await b.submit(form, { newPassword: "N3w-horse-staple!", newPasswordConfirmation: "N3w-horse-stapler!" }, page.url);
      expect(page.status).toBe(400);
      expect(alertText(page.html)).toBe(en.passwordsDiffer);
      // A forged progress: 403.
      form = formWith(page.html, "newPassword");
      page = await b.submit(form, { proof: "forged", newPassword: "N3w-horse-staple!", newPasswordConfirmation: "N3w-horse-staple!" }, page.url);
      expect(page.status).toBe(403);
      expect((await users.get(id)).human.passwordChangeRequired).toBe(true);
      page = await signIn(b, s.url, name);
      // A new password the policy refuses.
      form = formWith(page.html, "newPassword");
      page = await b.submit(form, { newPassword: "a", newPasswordConfirmation: "a" }, page.url);
      expect(page.status).toBe(400);
      expect(alertText(page.html)).toContain(en.passwordPolicy);
      expect((await users.get(id)).human.passwordChangeRequired).toBe(true);
      form = formWith(page.html, "newPassword");
      page = await b.submit(form, { newPassword: "N3w-horse-staple!", newPasswordConfirmation: "N3w-horse-staple!" }, page.url);
      expect(page.left, page.html).toBe(true);
      const tokens = await client.authorizationCodeGrant(basicApp.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
      expect(tokens.claims()!.sub).toBe(id);
      expect((await users.get(id)).human.passwordChangeRequired ?? false).toBe(false);
      // The new password signs in directly; the old one no longer does.
      const again = await signIn(new Browser(base()), (await start(basicApp)).url, name, "N3w-horse-staple!");
      expect(again.left, again.html).toBe(true);
      const old = await signIn(new Browser(base()), (await start(basicApp)).url, name, PASSWORD);
      expect(old.status).toBe(401);
    });
  });

  describe("language", () => {
    it("speaks German for ui_locales=de", async () => {
      const b = new Browser(base());
      let page = await b.open((await start(basicApp, { ui_locales: "de" })).url);
      expect(htmlLang(page.html)).toBe("de");
      expect(page.html).toContain(TEXTS.de.loginName);
      expect(page.html).toContain(`<title>${TEXTS.de.signInTitle}</title>`);
      page = await b.submit(formWith(page.html, "loginName"), { loginName: "nobody-here" }, page.url);
      expect(htmlLang(page.html)).toBe("de");
      expect(alertText(page.html)).toBe(TEXTS.de.unknownUser);
    });

    it("follows Accept-Language when ui_locales names nothing allowed", async () => {
      const b = new Browser(base(), { "accept-language": "xx, fr-CH;q=0.9, en;q=0.5" });
      let page = await b.open((await start(basicApp)).url);
      expect(htmlLang(page.html)).toBe("fr");
      expect(page.html).toContain(TEXTS.fr.loginName);
      page = await b.open((await start(basicApp, { ui_locales: "tlh" })).url);
      expect(htmlLang(page.html)).toBe("fr");
      // ui_locales wins over the header.
      page = await b.open((await start(basicApp, { ui_locales: "it-IT de" })).url);
      expect(htmlLang(page.html)).toBe("it");
    });

    it("keeps to the organization's restricted languages: ui_locales=de falls back to en", async () => {
      const org = await createOrg(server, `Restricted ${uniqueName("o")}`);
      ok(await languageClient(server).set({ restrictedLanguages: { languages: [{ key: "en" }] } }, { orgId: org.id }, server.adminToken));
      const name = uniqueName("erin");
      await users.create(humanUser(name, { password: PASSWORD }), { orgId: org.id });
      const b = new Browser(base(), { "accept-language": "de" });
      const s = await start(basicApp, { ui_locales: "de", scope: `openid urn:platform:iam:org:id:${org.id}` });
      let page = await b.open(s.url);
      expect(htmlLang(page.html)).toBe("en");
      expect(page.html).toContain(`<title>${en.signInTitle}</title>`);
      page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
      expect(htmlLang(page.html)).toBe("en");
      // The organization scope: alice (another organization) is unknown here.
      const c = new Browser(base());
      page = await c.open((await start(basicApp, { scope: `openid urn:platform:iam:org:id:${org.id}` })).url);
      page = await c.submit(formWith(page.html, "loginName"), { loginName: alice.name }, page.url);
      expect(page.status).toBe(401);
    });
  });

  describe("tokens and claims", () => {
    it("keeps profile and email out of the ID token issued with an access token, unless idTokenUserinfoAssertion", async () => {
      const scope = "openid profile email";
      const plain = (await codeFlow(basicApp, { scope })).tokens.claims()!;
      for (const claim of [
        "name",
        "given_name",
        "family_name",
        "email",
        "email_verified",
        "preferred_username",
        "nickname",
        "locale",
        "updated_at",
        "urn:platform:iam:user:resourceowner:id",
      ]) {
        expect(plain, claim).not.toHaveProperty(claim);
      }
      const asserted = (await codeFlow(postApp, { scope })).tokens.claims()!;
      expect(asserted).toMatchObject({
        sub: alice.id,
        given_name: "Given",
        family_name: "Family",
        email: `${alice.name}@mail.example`,
        nickname: "Ally",
        "urn:platform:iam:user:resourceowner:id": server.defaultOrgId,
      });
      expect(asserted.preferred_username).toBe(`${alice.name}@${orgDomain}`);
    });

    it("says how the user signed in (amr: pwd) in the ID tokens of the code exchange and of refreshes", async () => {
      for (const app of [basicApp, postApp]) {
        const { tokens } = await codeFlow(app, { scope: "openid offline_access" });
        expect(tokens.claims()!.amr).toEqual(["pwd"]);
        const refreshed = await client.refreshTokenGrant(app.config, tokens.refresh_token!);
        expect(refreshed.claims()!.amr).toEqual(["pwd"]);
      }
    });

    it("answers userinfo by scope with the access token", async () => {
      const { tokens } = await codeFlow(basicApp, { scope: "openid email" });
      const info = await client.fetchUserInfo(basicApp.config, tokens.access_token, alice.id);
      expect(info).toMatchObject({ sub: alice.id, email: `${alice.name}@mail.example`, email_verified: false });
      expect(info).not.toHaveProperty("given_name");
      const full = await codeFlow(basicApp, { scope: "openid profile" });
      const profile = await client.fetchUserInfo(basicApp.config, full.tokens.access_token, alice.id);
      expect(profile).toMatchObject({ given_name: "Given", family_name: "Family", preferred_username: `${alice.name}@${orgDomain}` });
      expect(profile).not.toHaveProperty("email");
    });

    it("lets the access token reach the resource APIs only with the platform scope", async () => {
      for (const app of [basicApp, postApp]) {
        const withScope = await codeFlow(app, { scope: `openid ${PLATFORM_SCOPE}` });
        const me = await fetch(`${base()}/resources/v3alpha/users/${alice.id}`, { headers: { authorization: `Bearer ${withScope.tokens.access_token}` } });
        expect(me.status).toBe(200);
        const without = await codeFlow(app, { scope: "openid" });
        const denied = await fetch(`${base()}/resources/v3alpha/users/${alice.id}`, { headers: { authorization: `Bearer ${without.tokens.access_token}` } });
        expect(denied.status).toBe(401);
      }
    });

    it("asserts roles at userinfo and introspection, in the ID token with idTokenRoleAssertion, in JWT access tokens with accessTokenRoleAssertion", async () => {
      const expected = { admin: { [server.defaultOrgId]: orgDomain } };
      // basicApp: JWT access token with roles, ID token without.
      const basic = await codeFlow(basicApp);
      expect(basic.tokens.claims()).not.toHaveProperty(ROLES);
      expect(decodeJwt(basic.tokens.access_token)[ROLES]).toEqual(expected);
      // postApp: opaque access token, roles in the ID token.
      const post = await codeFlow(postApp);
      expect(post.tokens.claims()![ROLES]).toEqual(expected);
      // A role scope limits the keys (the user has no "viewer"): no claim.
      const limited = await codeFlow(postApp, { scope: "openid urn:platform:iam:org:project:role:viewer" });
      expect(limited.tokens.claims()).not.toHaveProperty(ROLES);
      // Userinfo and introspection (the project asserts roles).
      const answers = {
        basicUserinfo: (await client.fetchUserInfo(basicApp.config, basic.tokens.access_token, alice.id))[ROLES],
        postUserinfo: (await client.fetchUserInfo(postApp.config, post.tokens.access_token, alice.id))[ROLES],
        basicIntrospection: (await introspect(basic.tokens.access_token))[ROLES],
        postIntrospection: (await introspect(post.tokens.access_token))[ROLES],
      };
      expect(answers, JSON.stringify(answers)).toEqual({
        basicUserinfo: expected,
        postUserinfo: expected,
        basicIntrospection: expected,
        postIntrospection: expected,
      });
    });

    it("introspects opaque and JWT access tokens as active for the project's API app", async () => {
      const jwt = await codeFlow(basicApp, { scope: "openid email" });
      const a = await introspect(jwt.tokens.access_token);
      expect(a).toMatchObject({
        active: true,
        sub: alice.id,
        client_id: basicApp.clientId,
        username: `${alice.name}@${orgDomain}`,
        email: `${alice.name}@mail.example`,
      });
      expect(a.aud).toEqual(expect.arrayContaining([basicApp.clientId, projectId]));
      const opaque = await codeFlow(publicApp);
      expect(await introspect(opaque.tokens.access_token)).toMatchObject({ active: true, sub: alice.id, client_id: publicApp.clientId });
    });
  });

  describe("refresh tokens", () => {
    it("issues one only with offline_access (without prompt=consent)", async () => {
      expect((await codeFlow(postApp, { scope: "openid" })).tokens.refresh_token).toBeUndefined();
      expect((await codeFlow(postApp, { scope: "openid offline_access" })).tokens.refresh_token).toBeTruthy();
      expect((await codeFlow(publicApp, { scope: "openid offline_access" })).tokens.refresh_token).toBeTruthy();
    });

    it("rotates on every use, allows a narrower scope, refuses a wider one, and refuses reuse", async () => {
      const { tokens } = await codeFlow(basicApp, { scope: "openid profile offline_access" });
      const rt1 = tokens.refresh_token!;
      const second = await client.refreshTokenGrant(basicApp.config, rt1);
      const rt2 = second.refresh_token!;
      expect(rt2).toBeTruthy();
      expect(rt2).not.toBe(rt1);
      expect(second.claims()!.sub).toBe(alice.id);
      expect(await userinfoStatus(second.access_token)).toBe(200);
      const narrower = await client.refreshTokenGrant(basicApp.config, rt2, { scope: "openid offline_access" });
      expect(narrower.scope!.split(" ").sort()).toEqual(["offline_access", "openid"]);
      const rt3 = narrower.refresh_token!;
      expect(rt3).not.toBe(rt2);
      await expect(client.refreshTokenGrant(basicApp.config, rt3, { scope: "openid profile email offline_access" })).rejects.toMatchObject({
        error: "invalid_scope",
      });
      // rt3 still works after the refused request.
      const fourth = await client.refreshTokenGrant(basicApp.config, rt3);
      expect(fourth.refresh_token).toBeTruthy();
      // Reuse of a rotated token.
      await expect(client.refreshTokenGrant(basicApp.config, rt1)).rejects.toMatchObject({ error: "invalid_grant" });
      await expect(client.refreshTokenGrant(basicApp.config, rt2)).rejects.toMatchObject({ error: "invalid_grant" });
    });

    it("ends the grant when a used refresh token comes back (theft)", async () => {
      const { tokens } = await codeFlow(postApp, { scope: "openid offline_access" });
      const next = await client.refreshTokenGrant(postApp.config, tokens.refresh_token!);
      await expect(client.refreshTokenGrant(postApp.config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
      await expect(client.refreshTokenGrant(postApp.config, next.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    });

    it("refuses another client's refresh token", async () => {
      const { tokens } = await codeFlow(basicApp, { scope: "openid offline_access" });
      await expect(client.refreshTokenGrant(postApp.config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
      expect((await client.refreshTokenGrant(basicApp.config, tokens.refresh_token!)).access_token).toBeTruthy();
    });

    /** Revokes a token as the app (basicApp by Basic, postApp in the body); expects 200. */
    async function revoke(app: App, token: string, hint: "access_token" | "refresh_token") {
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      const form: Record<string, string> = { token, token_type_hint: hint };
      if (app === basicApp) headers.authorization = basicAuth(app.clientId, app.clientSecret!);
      else Object.assign(form, { client_id: app.clientId, client_secret: app.clientSecret! });
      const res = await fetch(`${base()}/oauth/v2/revoke`, { method: "POST", headers, body: new URLSearchParams(form) });
      expect(res.status, await res.text()).toBe(200);
    }

    it("revokes a refresh token and the access tokens of its grant", async () => {
      for (const app of [basicApp, postApp]) {
        const { tokens } = await codeFlow(app, { scope: "openid offline_access" });
        expect((await introspect(tokens.access_token)).active).toBe(true);
        await revoke(app, tokens.refresh_token!, "refresh_token");
        await expect(client.refreshTokenGrant(app.config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
        expect((await introspect(tokens.access_token)).active).toBe(false);
        expect(await userinfoStatus(tokens.access_token)).toBe(401);
      }
    });

    it("revokes only what a refresh token issued: another authorization of the client in the same browser session keeps its tokens", async () => {
      const active = async (tokens: Record<string, string>) =>
        Object.fromEntries(await Promise.all(Object.entries(tokens).map(async ([k, t]) => [k, (await introspect(t)).active])));
      for (const app of [basicApp, postApp]) {
        const label = app === basicApp ? "jwt" : "opaque";
        const first = await codeFlow(app, { scope: "openid offline_access" });
        // A second authorization of the client in the same browser session (single sign-on):
        // the provider gives both the session's one grant for the client.
        const s = await start(app, { scope: "openid offline_access" });
        const sso = await first.browser.open(s.url);
        expect(sso.left, sso.html).toBe(true);
        const second = await client.authorizationCodeGrant(app.config, new URL(sso.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
        const firstRefreshed = await client.refreshTokenGrant(app.config, first.tokens.refresh_token!);

        // An access token revokes itself only: its own refresh token still works.
        await revoke(app, second.access_token, "access_token");
        expect(await active({ second: second.access_token, first: first.tokens.access_token, firstRefreshed: firstRefreshed.access_token }), label).toEqual({
          second: false,
          first: true,
          firstRefreshed: true,
        });
        const secondRefreshed = await client.refreshTokenGrant(app.config, second.refresh_token!);

        // The first authorization's refresh token ends its chain: the access tokens of its code
        // exchange and of its refresh, and itself; the second authorization's tokens stay.
        await revoke(app, firstRefreshed.refresh_token!, "refresh_token");
        expect(
          await active({ first: first.tokens.access_token, firstRefreshed: firstRefreshed.access_token, secondRefreshed: secondRefreshed.access_token }),
          label,
        ).toEqual({ first: false, firstRefreshed: false, secondRefreshed: true });
        await expect(client.refreshTokenGrant(app.config, firstRefreshed.refresh_token!), label).rejects.toMatchObject({ error: "invalid_grant" });
        const again = await client.refreshTokenGrant(app.config, secondRefreshed.refresh_token!);
        expect(await active({ secondRefreshed: secondRefreshed.access_token, again: again.access_token }), label).toEqual({
          secondRefreshed: true,
          again: true,
        });
      }
    });
  });

  describe("prompt and max_age", () => {
    it("prompt=none without a session: login_required at the redirect URI", async () => {
      const s = await start(basicApp, { prompt: "none" });
      const page = await new Browser(base()).open(s.url);
      expect(page.left).toBe(true);
      expect(params(page.url)).toMatchObject({ error: "login_required", state: s.state, iss: base() });
    });

    it("with a session: no pages again; prompt=login and max_age=0 ask again", async () => {
      const { browser: b } = await codeFlow(basicApp);
      // SSO: straight back with a code, also for prompt=none and for another app.
      for (const [app, extra] of [
        [basicApp, {}],
        [basicApp, { prompt: "none" }],
        [postApp, {}],
      ] as const) {
        const s = await start(app, extra);
        const page = await b.open(s.url);
        expect(page.left, page.html).toBe(true);
        expect(params(page.url).code).toBeTruthy();
        const tokens = await client.authorizationCodeGrant(app.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
        expect(tokens.claims()!.sub).toBe(alice.id);
      }
      for (const extra of [{ prompt: "login" }, { max_age: "0" }]) {
        const s = await start(basicApp, extra);
        let page = await b.open(s.url);
        expect(page.left, JSON.stringify(extra)).toBe(false);
        expect(page.status).toBe(200);
        expect(formWith(page.html, "loginName")).toBeTruthy();
        page = await b.submit(formWith(page.html, "loginName"), { loginName: alice.name }, page.url);
        page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
        expect(page.left).toBe(true);
        const tokens = await client.authorizationCodeGrant(basicApp.config, new URL(page.url), {
          pkceCodeVerifier: s.verifier,
          expectedState: s.state,
          ...(extra.max_age && { maxAge: 0 }),
        });
        const claims = tokens.claims()!;
        expect(claims.sub).toBe(alice.id);
        expect(typeof claims.auth_time).toBe("number");
        expect(Math.abs((claims.auth_time as number) - Date.now() / 1000)).toBeLessThan(30);
      }
    });
  });

  describe("errors", () => {
    async function expectErrorRedirect(app: App, extra: Record<string, string>, errors: string[], at = CB) {
      const s = await start(app, extra);
      const page = await new Browser(base()).open(s.url);
      expect(page.left, `${JSON.stringify(extra)}: ${page.status} ${page.html.slice(0, 300)}`).toBe(true);
      expect(page.url.startsWith(at), page.url).toBe(true);
      const p = params(page.url);
      expect(errors, JSON.stringify(p)).toContain(p.error);
      expect(p).toMatchObject({ state: s.state, iss: base() });
      expect(p.error_description).toBeTruthy();
      expect(p.code).toBeUndefined();
    }

    it("sends unsupported_response_type to the redirect URI", async () => {
      await expectErrorRedirect(basicApp, { response_type: "token" }, ["unsupported_response_type"]);
      await expectErrorRedirect(basicApp, { response_type: "code token" }, ["unsupported_response_type"]);
    });

    it("sends unauthorized_client to the redirect URI for a response type the app lacks (RFC 6749 4.1.2.1)", async () => {
      await expectErrorRedirect(basicApp, { response_type: "id_token", nonce: "n" }, ["unauthorized_client"]);
    });

    it("refuses a request without the openid scope at the redirect URI", async () => {
      await expectErrorRedirect(basicApp, { scope: "profile email" }, ["invalid_scope", "invalid_request"]);
    });

    it("ignores an invalid response_mode", async () => {
      const { browser: b } = await codeFlow(basicApp, { response_mode: "bogus" });
      const s = await start(basicApp, { response_mode: "nonsense" });
      const page = await b.open(s.url);
      expect(page.left).toBe(true);
      expect(new URL(page.url).searchParams.get("code")).toBeTruthy();
    });

    it("answers in the fragment or by a form posted to the redirect URI when asked (response_mode)", async () => {
      const { browser: b } = await codeFlow(basicApp);
      const fragment = await start(basicApp, { response_mode: "fragment" });
      let page = await b.open(fragment.url);
      expect(page.left).toBe(true);
      const u = new URL(page.url);
      expect(u.search).toBe("");
      expect(params(page.url)).toMatchObject({ state: fragment.state });
      expect(params(page.url).code).toBeTruthy();

      const posted = await start(basicApp, { response_mode: "form_post" });
      page = await b.open(posted.url);
      expect(page.status, page.html).toBe(200);
      expect(page.left).toBe(false);
      const form = parseForms(page.html).find((f) => f.action === CB);
      expect(form, page.html).toBeDefined();
      expect(form!.method.toLowerCase()).toBe("post");
      expect(form!.fields).toMatchObject({ state: posted.state, iss: base() });
      // The code in the posted form is a real one: it redeems like a query response.
      const callback = new URL(CB);
      for (const [k, v] of Object.entries(form!.fields)) callback.searchParams.set(k, v);
      const tokens = await client.authorizationCodeGrant(basicApp.config, callback, { pkceCodeVerifier: posted.verifier, expectedState: posted.state });
      expect(tokens.claims()!.sub).toBe(alice.id);
    });

    it("shows an HTML error page (400, no redirect) for an unregistered or missing redirect_uri and an unknown client", async () => {
      // postApp registers one URI: the spec requires redirect_uri even then (OAuth 2.0 would take it).
      const cases = [
        [basicApp, { redirect_uri: "https://evil.example/cb" }],
        [basicApp, { redirect_uri: undefined }],
        [postApp, { redirect_uri: undefined }],
        [basicApp, { client_id: "no-such-client" }],
      ] as const;
      for (const [app, extra] of cases) {
        const s = await start(app, extra);
        const res = await fetch(s.url, { redirect: "manual" });
        const html = await res.text();
        expect(res.status, `${app === postApp ? "postApp" : "basicApp"} ${JSON.stringify(extra)} ${html.slice(0, 300)}`).toBe(400);
        expect(res.headers.get("location")).toBeNull();
        expect(res.headers.get("content-type")).toMatch(/^text\/html/);
        expect(res.headers.get("cache-control")).toBe("no-store");
        expect(res.headers.get("x-frame-options")).toBe("DENY");
        expect(htmlLang(html)).toBe("en");
        expect(html).toContain(`<title>${en.errorTitle}</title>`);
        expect(html).not.toContain("evil.example");
        expect(html).not.toMatch(/<script/i);
        // A sentence for the person, what to do, and the provider's words for the developer under a disclosure.
        const said = "client_id" in extra ? en.errorUnknownApp : extra.redirect_uri ? en.errorReturnAddress : en.errorBadRequest;
        expect(alertText(html), JSON.stringify(extra)).toBe(said);
        expect(unescapeHtml(html)).toContain(en.errorWhatNow);
        expect(unescapeHtml(html)).toMatch(
          new RegExp(`<details class="muted"><summary>${en.errorForDevelopers}</summary><p><code>invalid_(client|redirect_uri|request)</code>`),
        );
      }
      // In the person's language, the technical words (English) only for the developer.
      const s = await start(basicApp, { redirect_uri: "https://evil.example/cb", ui_locales: "de" });
      const html = await (await fetch(s.url, { redirect: "manual" })).text();
      expect(htmlLang(html)).toBe("de");
      expect(alertText(html)).toBe(TEXTS.de.errorReturnAddress);
      expect(html).toContain(`<summary>${TEXTS.de.errorForDevelopers}</summary>`);
    });
  });

  describe("end session", () => {
    async function confirmLogout(b: Browser, query: Record<string, string>): Promise<Page> {
      const url = new URL("/oidc/v1/end_session", base());
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
      const page = await b.open(url);
      expect(page.status, page.html).toBe(200);
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      const form = formWith(page.html, "op.logoutForm");
      expect(form.fields.xsrf).toBeTruthy();
      expect(page.html).toContain('name="logout" value="yes"');
      expect(new URL(form.action, page.url).pathname).toBe("/oidc/v1/end_session/confirm");
      return b.submit(form, { logout: "yes" }, page.url);
    }

    /** Signs in with basicApp (JWT) and postApp (opaque) in one browser session. */
    async function twoApps(scope: string) {
      const first = await codeFlow(basicApp, { scope });
      const b = first.browser;
      const s = await start(postApp, { scope });
      const sso = await b.open(s.url);
      expect(sso.left).toBe(true);
      const second = await client.authorizationCodeGrant(postApp.config, new URL(sso.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
      for (const t of [first.tokens.access_token, second.access_token]) expect((await introspect(t)).active).toBe(true);
      return { b, first: first.tokens, second };
    }

    it("ends the session, revokes its grants and redirects to the registered URI with state", async () => {
      const { b, first, second } = await twoApps("openid");
      const page = await confirmLogout(b, { id_token_hint: first.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: "bye" });
      expect(page.left, page.html).toBe(true);
      expect(page.url).toBe(`${LOGGED_OUT}?state=bye`);
      for (const [label, t] of [
        ["jwt", first.access_token],
        ["opaque", second.access_token],
      ]) {
        expect((await introspect(t!)).active, label).toBe(false);
        expect(await userinfoStatus(t!), label).toBe(401);
      }
      // The browser's session is gone.
      const none = await start(basicApp, { prompt: "none" });
      expect(params((await b.open(none.url)).url)).toMatchObject({ error: "login_required", state: none.state });
    });

    it("revokes the grants with offline_access too (their refresh and access tokens)", async () => {
      const { b, first, second } = await twoApps("openid offline_access");
      const page = await confirmLogout(b, { id_token_hint: first.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: "bye" });
      expect(page.url).toBe(`${LOGGED_OUT}?state=bye`);
      for (const [label, t] of [
        ["jwt", first.access_token],
        ["opaque", second.access_token],
      ]) {
        expect((await introspect(t!)).active, label).toBe(false);
      }
      await expect(client.refreshTokenGrant(basicApp.config, first.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
      await expect(client.refreshTokenGrant(postApp.config, second.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    });

    it("accepts client_id instead of the hint, and refuses an unregistered post_logout_redirect_uri", async () => {
      const { browser: b } = await codeFlow(postApp);
      const refused = await b.open(
        `${base()}/oidc/v1/end_session?client_id=${postApp.clientId}&post_logout_redirect_uri=${encodeURIComponent("https://evil.example/out")}`,
      );
      expect(refused.status).toBe(400);
      expect(refused.left).toBe(false);
      expect(refused.html).toContain(en.errorTitle);
      expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
      const page = await confirmLogout(b, { client_id: postApp.clientId, post_logout_redirect_uri: LOGGED_OUT, state: "s2" });
      expect(page.url).toBe(`${LOGGED_OUT}?state=s2`);
    });

    it("takes only a URI registered, exactly, for the client the hint names", async () => {
      const other = await createApp("logout-other", { redirectUris: [CB], postLogoutRedirectUris: [`${RP}/other-out`] }, "basic");
      const { browser: b, tokens } = await codeFlow(basicApp);
      const refusedFor = async (uri: string, hint = tokens.id_token!) => {
        const page = await b.open(`${base()}/oidc/v1/end_session?id_token_hint=${hint}&post_logout_redirect_uri=${encodeURIComponent(uri)}&state=x`);
        expect({ uri, status: page.status, left: page.left }).toEqual({ uri, status: 400, left: false });
      };
      // Another client's registered URI, and near matches of the hint's own.
      for (const uri of [
        `${RP}/other-out`,
        `${LOGGED_OUT}/`,
        `${LOGGED_OUT}?next=1`,
        `${LOGGED_OUT}#x`,
        LOGGED_OUT.replace("https:", "http:"),
        LOGGED_OUT.toUpperCase(),
      ])
        await refusedFor(uri);
      // A hint that is not this instance's ID token: forged signature.
      const [h, p] = tokens.id_token!.split(".");
      await refusedFor(LOGGED_OUT, `${h}.${p}.${"A".repeat(43)}`);
      // The other client with its own URI works (client_id instead of a hint).
      const page = await confirmLogout(b, { client_id: other.clientId, post_logout_redirect_uri: `${RP}/other-out`, state: "o" });
      expect(page.url).toBe(`${RP}/other-out?state=o`);
    });

    it("refuses a hint and client_id that disagree", async () => {
      const { browser: b, tokens } = await codeFlow(basicApp);
      const page = await b.open(
        `${base()}/oidc/v1/end_session?id_token_hint=${tokens.id_token}&client_id=${postApp.clientId}&post_logout_redirect_uri=${encodeURIComponent(LOGGED_OUT)}`,
      );
      expect(page.status).toBe(400);
      expect(page.left).toBe(false);
    });

    it("ignores the redirect without a hint or client_id and shows the signed-out page", async () => {
      const { browser: b } = await codeFlow(basicApp);
      const page = await confirmLogout(b, { post_logout_redirect_uri: LOGGED_OUT, state: "s3" });
      expect(page.left).toBe(false);
      expect(page.status).toBe(200);
      expect(page.html).toContain(en.signedOut);
      expect(page.html).not.toContain("rp.example");
    });
  });

  describe("implicit flow", () => {
    it("requires a nonce and answers in the fragment; id_token alone carries the profile, with an access token it does not", async () => {
      const b = new Browser(base());
      const noNonce = await start(implicitApp, { response_type: "id_token", code_challenge: undefined, code_challenge_method: undefined });
      let page = await b.open(noNonce.url);
      expect(page.left).toBe(true);
      expect(new URL(page.url).hash).toContain("error=invalid_request");
      expect(params(page.url).state).toBe(noNonce.state);

      const s = await start(implicitApp, {
        response_type: "id_token",
        nonce: "n-1",
        scope: "openid profile email",
        code_challenge: undefined,
        code_challenge_method: undefined,
      });
      page = await signIn(b, s.url, alice.name);
      expect(page.left, page.html).toBe(true);
      expect(new URL(page.url).search).toBe("");
      let p = params(page.url);
      expect(p.state).toBe(s.state);
      expect(p.access_token).toBeUndefined();
      expect(p.code).toBeUndefined();
      let id = decodeJwt(p.id_token!);
      expect(id).toMatchObject({
        iss: base(),
        aud: implicitApp.clientId,
        sub: alice.id,
        nonce: "n-1",
        given_name: "Given",
        email: `${alice.name}@mail.example`,
        amr: ["pwd"],
      });

      const t = await start(implicitApp, {
        response_type: "id_token token",
        nonce: "n-2",
        scope: "openid profile email",
        code_challenge: undefined,
        code_challenge_method: undefined,
      });
      page = await b.open(t.url);
      expect(page.left).toBe(true);
      p = params(page.url);
      expect(p.access_token).toBeTruthy();
      expect(p.token_type?.toLowerCase()).toBe("bearer");
      id = decodeJwt(p.id_token!);
      expect(id).toMatchObject({ sub: alice.id, nonce: "n-2", amr: ["pwd"] });
      expect(id.at_hash).toBeTruthy();
      expect(id).not.toHaveProperty("email");
      expect(id).not.toHaveProperty("given_name");
      const info = await client.fetchUserInfo(implicitApp.config, p.access_token!, alice.id);
      expect(info).toMatchObject({ email: `${alice.name}@mail.example`, given_name: "Given" });
    });

    it("refuses the code response type for an implicit-only app", async () => {
      const s = await start(implicitApp, { nonce: "n" });
      const page = await new Browser(base()).open(s.url);
      expect(page.left).toBe(true);
      expect(params(page.url)).toMatchObject({ error: "unauthorized_client", state: s.state });
    });

    it("allows http://localhost for an implicit app in development mode", async () => {
      const dev = await createApp(
        "dev implicit",
        { redirectUris: ["http://localhost/cb"], appType: USER_AGENT, authMethodType: NONE, responseTypes: [ID_TOKEN], grantTypes: [IMPLICIT], devMode: true },
        "none",
      );
      const s = await start(dev, { response_type: "id_token", nonce: "dev", code_challenge: undefined, code_challenge_method: undefined });
      const page = await signIn(new Browser(base()), s.url, alice.name);
      expect(page.left, page.html).toBe(true);
      expect(page.url.startsWith("http://localhost/cb#")).toBe(true);
      expect(decodeJwt(params(page.url).id_token!)).toMatchObject({ sub: alice.id, nonce: "dev" });
    });
  });
});

describe.each(DATABASE_KINDS)("login rate limit per login name (%s)", (kind) => {
  let server: TestServer;
  let meta: client.ServerMetadata;
  let clientId: string;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "2" });
    const projectId = (await projectClient(server.baseUrl, server.adminToken).ok("CreateProject", { project: { name: "rl" } })).details.id as string;
    clientId = (
      await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
        projectId,
        app: { name: "rl", oidc: oidc({ redirectUris: [CB], responseTypes: [CODE], grantTypes: [AUTH_CODE] }) },
      })
    ).clientId;
    meta = (await client.discovery(new URL(server.baseUrl), clientId, undefined, undefined, { execute: [client.allowInsecureRequests] })).serverMetadata();
    expect(meta.issuer).toBe(server.baseUrl);
  }, 120_000);
  afterAll(() => server?.close());

  const authorizeUrl = async () => {
    const url = new URL("/oauth/v2/authorize", server.baseUrl);
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    for (const [k, v] of Object.entries({
      client_id: clientId,
      redirect_uri: CB,
      response_type: "code",
      scope: "openid",
      state: "x",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }))
      url.searchParams.set(k, v);
    return url.href;
  };

  it("answers 429 with Retry-After after 2 password attempts a minute at one login name; others are not affected", async () => {
    const users = new Users(server);
    const victim = uniqueName("vic");
    const bystander = uniqueName("by");
    await users.create(humanUser(victim, { password: PASSWORD }));
    await users.create(humanUser(bystander, { password: PASSWORD }));
    const b = new Browser(server.baseUrl);
    let page = await b.open(await authorizeUrl());
    page = await b.submit(formWith(page.html, "loginName"), { loginName: victim }, page.url);
    const statuses: number[] = [];
    let limited: Page | undefined;
    for (let i = 0; i < 3; i++) {
      page = await b.submit(formWith(page.html, "password"), { password: "wrong-Passw0rd!" }, page.url);
      statuses.push(page.status);
      if (page.status === 429) limited = page;
    }
    // A minute window may turn between attempts; then the third is still counted afresh.
    if (statuses[2] !== 429) {
      page = await b.submit(formWith(page.html, "password"), { password: "wrong-Passw0rd!" }, page.url);
      page = await b.submit(formWith(page.html, "password"), { password: "wrong-Passw0rd!" }, page.url);
      limited = page;
    } else {
      expect(statuses).toEqual([401, 401, 429]);
    }
    expect(limited!.status).toBe(429);
    const retry = Number(limited!.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(alertText(limited!.html)).toBe(en.tooManyAttempts);
    expect(formWith(limited!.html, "password")).toBeTruthy();
    // Even the right password is refused while limited.
    page = await b.submit(formWith(limited!.html, "password"), { password: PASSWORD }, limited!.url);
    expect(page.status).toBe(429);
    expect(page.left).toBe(false);
    // Another login name from the same address is not limited.
    const c = new Browser(server.baseUrl);
    page = await c.open(await authorizeUrl());
    page = await c.submit(formWith(page.html, "loginName"), { loginName: bystander }, page.url);
    page = await c.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    expect(page.left, page.html).toBe(true);
    expect(new URL(page.url).searchParams.get("code")).toBeTruthy();
  });

  it("counts the codes \"Send a new code\" sends toward the person's budget, not only the address's (issue 41 §7: SMS cost)", async () => {
    const users = new Users(server);
    const name = uniqueName("sender");
    const id = await users.create(humanUser(name, { password: PASSWORD, email: { address: `${name}@mail.example`, isVerified: true } }));
    ok(await users.call("AddOTPEmail", { id }));
    const b = new Browser(server.baseUrl);
    let page = await b.open(await authorizeUrl());
    page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
    // The password is one of the two tries of the minute; a new code is the second, the next is refused.
    page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    const resend = () => parseForms(page.html).find((f) => f.fields.resend === "1") ?? expect.fail(page.html);
    const statuses: number[] = [];
    for (let i = 0; i < 3 && !statuses.includes(429); i++) {
      page = await b.submit(resend(), {}, page.url);
      statuses.push(page.status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(alertText(page.html)).toBe(en.tooManyAttempts);
    expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
