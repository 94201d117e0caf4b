import type { JsonObject } from "@bufbuild/protobuf";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { AUTH_CODE, BASIC, WEB, appClient, oidc, projectClient } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, createOrg, humanUser, ok, uniqueName } from "../users/helpers.js";
import { Browser, alertText, formWith, parseForms, type Page } from "./browser.js";

/*
 * Black-box tests of the prompts the login pages add to the provider's (src/oidc/login/
 * policy.ts, select-account.ts, register.ts) and of the login settings they follow:
 * account selection between accounts signed in on one browser, prompt=login and max_age
 * over a known account, registration (prompt=create) allowed or not and its errors, the
 * lockout threshold and password sign-in per organization.
 */

const PASSWORD = "Corr3ct-horse!";
const RP = "https://rp.example";
const CB = `${RP}/cb`;
const en = TEXTS.en;

describe.each(DATABASE_KINDS)("login prompts and login settings (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let config: client.Configuration;
  let clientId: string;
  let alice: { id: string; name: string };
  let bob: { id: string; name: string };
  const base = () => server.baseUrl;

  const loginSettings = (settings: JsonObject, ctx?: JsonObject) =>
    protocolClient(PlatformLoginSettings, "grpc", base())
      .call("SetLoginSettings", { settings, ...(ctx && { ctx }) }, server.adminToken)
      .then((r) => expect(r, JSON.stringify(r)).toMatchObject({ ok: true }));

  async function start(params: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = new URL("/oauth/v2/authorize", base());
    // A max_age puts auth_time into the ID token: the tests compare sign-in times.
    const query = {
      client_id: clientId,
      redirect_uri: CB,
      response_type: "code",
      scope: "openid",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      max_age: "86400",
      ...params,
    };
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return { url: url.href, state, verifier };
  }

  /**
   * Past the provider's own page when a login changes the browser's account: it ends the
   * old session with an auto-submitted form (end session confirm) and resumes.
   */
  async function settle(b: Browser, page: Page): Promise<Page> {
    const logout =
      !page.left && parseForms(page.html).find((f) => new URL(f.action, page.url).pathname === "/oidc/v1/end_session/confirm" && "xsrf" in f.fields);
    return logout ? b.submit(logout, {}, page.url) : page;
  }

  async function tokensOf(s: { state: string; verifier: string }, page: Page) {
    expect(page.left, page.html).toBe(true);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url), {
      pkceCodeVerifier: s.verifier,
      expectedState: s.state,
      idTokenExpected: true,
      maxAge: 86400,
    });
    return { tokens, claims: tokens.claims()! };
  }

  /** Login name and password on the page given (the login name page). */
  async function password(b: Browser, page: Page, loginName: string, pw = PASSWORD): Promise<Page> {
    page = await b.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    expect(page.status, page.html).toBe(200);
    return b.submit(formWith(page.html, "password"), { password: pw }, page.url);
  }

  /** The chooser's form for an account. */
  const choice = (page: Page, accountId: string) => {
    const form = parseForms(page.html).find((f) => f.fields.accountId === accountId);
    if (!form) throw new Error(`no choice of ${accountId} in ${page.html}`);
    return form;
  };
  const choicesOn = (page: Page) =>
    parseForms(page.html)
      .filter((f) => "accountId" in f.fields)
      .map((f) => f.fields.accountId);

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" });
    const discovered = await client.discovery(new URL(base()), "discovery", undefined, undefined, { execute: [client.allowInsecureRequests] });
    users = new Users(server);
    alice = { name: uniqueName("alice"), id: "" };
    bob = { name: uniqueName("bob"), id: "" };
    alice.id = await users.create(humanUser(alice.name, { password: PASSWORD }));
    bob.id = await users.create(humanUser(bob.name, { password: PASSWORD }));
    const projectId = (await projectClient(base(), server.adminToken).ok("CreateProject", { project: { name: "prompts" } })).details.id as string;
    const made = await appClient(base(), server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: "web", oidc: oidc({ redirectUris: [CB], appType: WEB, authMethodType: BASIC, grantTypes: [AUTH_CODE] } as never) },
    });
    clientId = made.clientId as string;
    config = new client.Configuration(
      discovered.serverMetadata(),
      clientId,
      { client_secret: made.clientSecret as string },
      client.ClientSecretBasic(made.clientSecret as string),
    );
    client.allowInsecureRequests(config);
  }, 120_000);
  afterAll(() => server?.close());

  describe("account selection", () => {
    it("offers the accounts signed in on the browser, finishes a still valid one without a password, and forgets one that signs out", async () => {
      const b = new Browser(base());
      // Alice signs in; with one account known, a request without prompt is plain SSO.
      let s = await start();
      let page = await password(b, await b.open(s.url), alice.name);
      const first = await tokensOf(s, page);
      expect(first.claims.sub).toBe(alice.id);
      expect(b.cookieHeader("/ui/login/x")).toMatch(/platform_accounts=/);
      s = await start();
      expect((await tokensOf(s, await b.open(s.url))).claims.sub).toBe(alice.id);

      // prompt=select_account: the chooser (login names), then "use another account" for Bob.
      s = await start({ prompt: "select_account" });
      page = await b.open(s.url);
      expect(page.status, page.html).toBe(200);
      expect(page.html).toContain(en.selectAccountTitle);
      expect(choicesOn(page)).toEqual([alice.id]);
      expect(page.html).toContain(`>${alice.name}@`);
      const other = /<a href="([^"]*\/other)">/.exec(page.html)![1]!;
      page = await password(b, await b.open(new URL(other, page.url)), bob.name);
      const bobs = await tokensOf(s, await settle(b, page));
      expect(bobs.claims.sub).toBe(bob.id);

      // Two accounts known: without a prompt the person chooses; each without a password.
      for (const [who, original] of [
        [alice, first.claims.auth_time],
        [bob, bobs.claims.auth_time],
      ] as const) {
        s = await start();
        page = await b.open(s.url);
        expect(page.left, "the chooser, not SSO").toBe(false);
        expect(choicesOn(page).sort()).toEqual([alice.id, bob.id].sort());
        page = await settle(b, await b.submit(choice(page, who.id), {}, page.url));
        const chosen = await tokensOf(s, page);
        expect(chosen.claims.sub).toBe(who.id);
        expect(typeof original).toBe("number");
        expect(chosen.claims.auth_time, "the original sign-in's time").toBe(original);
      }
      // prompt=none never shows the chooser: the current session answers.
      s = await start({ prompt: "none" });
      expect((await tokensOf(s, await b.open(s.url))).claims.sub).toBe(bob.id);

      // Bob signs out: only Alice is left to choose, and without a prompt nobody is chosen for him.
      page = await b.open(`${base()}/oidc/v1/end_session?client_id=${clientId}`);
      page = await b.submit(formWith(page.html, "op.logoutForm"), { logout: "yes" }, page.url);
      expect(page.html).toContain(en.signedOut);
      s = await start({ prompt: "select_account" });
      page = await b.open(s.url);
      expect(choicesOn(page)).toEqual([alice.id]);
      s = await start();
      page = await b.open(s.url);
      expect(page.left).toBe(false);
      expect(formWith(page.html, "loginName")).toBeTruthy();
    });

    it("asks for the password of a chosen account with prompt=login or when max_age has passed", async () => {
      const b = new Browser(base());
      let s = await start();
      const first = await tokensOf(s, await password(b, await b.open(s.url), alice.name));
      const cases: Record<string, string>[] = [{ prompt: "select_account login" }, { prompt: "select_account", max_age: "1" }];
      for (const extra of cases) {
        // auth_time counts seconds: the new sign-in must fall in a later second to tell.
        const wait = extra.max_age ? 2100 : Math.max(0, ((first.claims.auth_time as number) + 1) * 1000 - Date.now() + 50);
        await new Promise((r) => setTimeout(r, wait));
        s = await start(extra);
        let page = await b.open(s.url);
        page = await b.submit(choice(page, alice.id), {}, page.url);
        expect(page.status, page.html).toBe(200);
        const form = formWith(page.html, "password");
        expect(form.fields.loginName).toMatch(new RegExp(`^${alice.name}`));
        // A wrong password is still wrong.
        const wrong = await b.submit(form, { password: "nope" }, page.url);
        expect(alertText(wrong.html)).toBe(en.wrongPassword);
        page = await b.submit(form, { password: PASSWORD }, page.url);
        const again = await tokensOf(s, await settle(b, page));
        expect(again.claims.sub).toBe(alice.id);
        expect(typeof first.claims.auth_time).toBe("number");
        expect(again.claims.auth_time as number, JSON.stringify(extra)).toBeGreaterThan(first.claims.auth_time as number);
      }
    });

    it("offers nothing it does not know: an empty chooser, and a forged choice leads to the login name", async () => {
      const b = new Browser(base());
      const s = await start({ prompt: "select_account" });
      let page = await b.open(s.url);
      expect(page.html).toContain(en.selectAccountEmpty);
      const action = new URL(page.url + "/select");
      const csrf = /name="csrf" value="([^"]+)"/.exec((await b.open(new URL(/<a href="([^"]*\/other)">/.exec(page.html)![1]!, page.url))).html)![1]!;
      page = await b.open(action, { method: "POST", form: { csrf, accountId: alice.id } });
      expect(page.left).toBe(false);
      expect(formWith(page.html, "loginName")).toBeTruthy();
      expect(page.html).not.toContain(alice.name);
    });
  });

  describe("registration", () => {
    const FIELDS = ["givenName", "familyName", "email", "loginName", "password", "passwordConfirmation"];

    it("shows the sign-in page with a notice for prompt=create while registration is off (the default)", async () => {
      const b = new Browser(base());
      const s = await start({ prompt: "create" });
      const page = await b.open(s.url);
      expect(page.status).toBe(200);
      expect(alertText(page.html)).toBe(en.registerNotAllowed);
      expect(formWith(page.html, "loginName")).toBeTruthy();
      expect(page.html).not.toContain(`>${en.registerLink}<`);
      const direct = await b.open(page.url + "/register");
      expect(alertText(direct.html)).toBe(en.registerNotAllowed);
      // Signing in still works and resolves the prompt.
      expect((await tokensOf(s, await password(b, page, alice.name))).claims.sub).toBe(alice.id);
    });

    it("registers a person when the organization allows it, refusing bad input with clear errors", async () => {
      await loginSettings({ allowRegister: { set: true } }, { orgId: server.defaultOrgId });
      try {
        const b = new Browser(base(), { "accept-language": "en" });
        // A Register link under the login name form.
        let s = await start();
        let page = await b.open(s.url);
        expect(page.html).toContain(`>${en.registerLink}</a>`);

        s = await start({ prompt: "create", scope: "openid profile email" });
        page = await b.open(s.url);
        expect(page.status, page.html).toBe(200);
        expect(page.html).toContain(en.registerTitle);
        const form = formWith(page.html, "givenName");
        expect(form.visible).toEqual(FIELDS);
        for (const name of FIELDS) expect(page.html).toContain(`<label for="${name}">`);
        expect(page.html).toContain('<button type="submit">');
        expect(form.fields.csrf).toBeTruthy();

        const username = uniqueName("carol");
        const good = {
          givenName: "Carol",
          familyName: "Clark",
          email: `${username}@mail.example`,
          loginName: username,
          password: PASSWORD,
          passwordConfirmation: PASSWORD,
        };
        // A username that would read as the login name of a person of another organization.
        const other = await createOrg(server, uniqueName("Elsewhere"));
        const refusals: [Record<string, string>, number, string][] = [
          [{ passwordConfirmation: "other" }, 400, en.passwordsDiffer],
          [{ password: "short", passwordConfirmation: "short" }, 400, en.passwordPolicy],
          [{ loginName: alice.name.toUpperCase() }, 409, en.registerUsernameTaken],
          [{ loginName: `${username}@${other.primary.toUpperCase()}` }, 400, en.registerUsernameTaken],
          [{ loginName: "with space" }, 400, en.registerInvalidUsername],
          [{ email: "not-an-address" }, 400, en.registerInvalidEmail],
          [{ givenName: " " }, 400, en.registerInvalidName],
        ];
        for (const [change, status, text] of refusals) {
          const refused = await b.submit(form, { ...good, ...change }, page.url);
          expect(refused.status, JSON.stringify(change)).toBe(status);
          expect(alertText(refused.html)?.startsWith(text), `${JSON.stringify(change)}: ${alertText(refused.html)}`).toBe(true);
          // What was typed stays; the passwords too, unless the error is about them.
          const again = formWith(refused.html, "givenName");
          expect(again.fields.familyName).toBe("Clark");
          const aboutPassword = text === en.passwordsDiffer || text === en.passwordPolicy;
          expect(again.fields.password, JSON.stringify(change)).toBe(aboutPassword ? "" : PASSWORD);
          expect(again.fields.passwordConfirmation).toBe(aboutPassword ? "" : PASSWORD);
        }
        // The rules of the instance's password policy show under the field before anything is typed.
        expect(page.html).toContain('aria-describedby="password-hint"');
        expect(/id="password-hint">([^<]*)</.exec(page.html)?.[1]).toBe(
          en.passwordHint.replace("{rules}", "at least 8 characters, an uppercase letter, a lowercase letter, a number, and a symbol"),
        );
        expect(page.html).toContain(`<label for="passwordConfirmation">${en.repeatPassword}</label>`);
        // A policy refusal says the rules it breaks, in the page's language.
        const short = await b.submit(form, { ...good, password: "short", passwordConfirmation: "short" }, page.url);
        expect(alertText(short.html)).toBe(
          `${en.passwordPolicy} ${en.passwordNeeds.replace("{rules}", "at least 8 characters, an uppercase letter, a number, and a symbol")}`,
        );
        // A form without this interaction's token is refused.
        expect((await b.submit(form, { ...good, csrf: "forged" }, page.url)).status).toBe(403);

        const done = await tokensOf(s, await b.submit(form, good, page.url));
        const id = done.claims.sub;
        const user = await users.get(id);
        expect(user).toMatchObject({
          username,
          human: { profile: { givenName: "Carol", familyName: "Clark", preferredLanguage: "en" }, email: { address: good.email } },
        });
        expect(user.details.resourceOwner).toMatchObject({ id: server.defaultOrgId });
        const info = await client.fetchUserInfo(config, done.tokens.access_token, id);
        expect(info).toMatchObject({ sub: id, given_name: "Carol", family_name: "Clark", email: good.email, email_verified: false });
        // The new person signs in with the password chosen.
        const later = new Browser(base());
        const s2 = await start();
        expect((await tokensOf(s2, await password(later, await later.open(s2.url), username))).claims.sub).toBe(id);
      } finally {
        await loginSettings({ allowRegister: { reset: true } }, { orgId: server.defaultOrgId });
      }
    });

    it("registers into the organization the scope names, by that organization's settings", async () => {
      const org = await createOrg(server, uniqueName("Shop"));
      await loginSettings({ allowRegister: { set: true } }, { orgId: org.id });
      const b = new Browser(base());
      // The default organization still says no.
      let s = await start({ prompt: "create" });
      expect(alertText((await b.open(s.url)).html)).toBe(en.registerNotAllowed);
      s = await start({ prompt: "create", scope: `openid urn:platform:iam:org:id:${org.id}` });
      const page = await b.open(s.url);
      const username = uniqueName("dave");
      const done = await tokensOf(
        s,
        await b.submit(
          formWith(page.html, "givenName"),
          { givenName: "Dave", familyName: "Doe", email: `${username}@mail.example`, loginName: username, password: PASSWORD, passwordConfirmation: PASSWORD },
          page.url,
        ),
      );
      expect((await users.get(done.claims.sub)).details.resourceOwner).toMatchObject({ id: org.id });
    });
  });

  describe("login names", () => {
    it("reads name@domain as the user of the organization with that domain, before a username that reads the same", async () => {
      // A username made before any organization had the domain ...
      const domain = `${uniqueName("later")}.example`;
      const squatter = await users.create(humanUser(`bob@${domain}`, { password: PASSWORD, email: { address: "squatter@mail.example" } }));
      // ... which an organization adds afterwards, with its own bob.
      const org = await createOrg(server, uniqueName("Later"));
      ok(await protocolClient(PlatformDomains, "grpc", base()).call("AddDomain", { domain: { domain }, ctx: { orgId: org.id } }, server.adminToken));
      const bob = await users.create(humanUser("bob", { password: PASSWORD }), { orgId: org.id });
      const b = new Browser(base());
      const s = await start();
      const signedIn = await tokensOf(s, await password(b, await b.open(s.url), `bob@${domain.toUpperCase()}`));
      expect(signedIn.claims.sub).toBe(bob);
      expect(signedIn.claims.sub).not.toBe(squatter);
    });
  });

  describe("login settings on the pages", () => {
    it("locks after the organization's max_password_attempts (2), not the instance's default", async () => {
      const org = await createOrg(server, uniqueName("Strict"));
      await loginSettings({ maxPasswordAttempts: { set: 2 } }, { orgId: org.id });
      const name = uniqueName("erin");
      const id = await users.create(humanUser(name, { password: PASSWORD }), { orgId: org.id });
      const b = new Browser(base());
      const s = await start();
      let page = await b.open(s.url);
      page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
      const form = formWith(page.html, "password");
      page = await b.submit(form, { password: "wrong-1" }, page.url);
      expect(page.status).toBe(401);
      expect(alertText(page.html)).toBe(en.wrongPassword);
      page = await b.submit(form, { password: "wrong-2" }, page.url);
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.userLocked);
      expect((await users.get(id)).state).toBe("USER_STATE_LOCKED");
      // A user of the default organization gets the default (10): two wrong passwords lock nobody.
      const p2 = await b.submit(formWith((await b.open((await start()).url)).html, "loginName"), { loginName: bob.name }, page.url);
      for (const pw of ["wrong-1", "wrong-2", "wrong-3"]) expect((await b.submit(formWith(p2.html, "password"), { password: pw }, p2.url)).status).toBe(401);
      expect((await users.get(bob.id)).state).toBe("USER_STATE_ACTIVE");
    });

    it("refuses the password form with a clear page where allow_username_password is off", async () => {
      const org = await createOrg(server, uniqueName("Federated"));
      await loginSettings({ allowUsernamePassword: { set: false } }, { orgId: org.id });
      const name = uniqueName("frank");
      await users.create(humanUser(name, { password: PASSWORD }), { orgId: org.id });
      const b = new Browser(base());
      const s = await start();
      let page = await b.open(s.url);
      const loginForm = formWith(page.html, "loginName");
      page = await b.submit(loginForm, { loginName: name }, page.url);
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.passwordLoginDisabled);
      expect(parseForms(page.html).some((f) => "password" in f.fields)).toBe(false);
      // Posting the password directly is refused the same way.
      page = await b.open(new URL(loginForm.action.replace(/loginname$/, "password"), page.url), {
        method: "POST",
        form: { ...loginForm.fields, loginName: name, password: PASSWORD },
      });
      expect(page.status).toBe(403);
      expect(alertText(page.html)).toBe(en.passwordLoginDisabled);
    });
  });
});
