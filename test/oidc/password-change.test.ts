import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_CODE, BASIC, BEARER, REFRESH, WEB } from "../apps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { Browser, formWith, parseForms, type Page } from "./browser.js";
import { createApp, RP, type App } from "./external-helpers.js";

/*
 * A password change ends what the old password proved (issue 41 §4; docs/oidc.md, "A password
 * change"): a browser signed in with it signs in again, with or without a prompt, on the
 * account chooser too; `prompt=none` answers login_required; the refresh tokens of such a
 * sign-in are refused (invalid_grant).
 */

const PASSWORD = "Corr3ct-horse!";
const NEW_PASSWORD = "N3w-horse-battery!";

describe.each(DATABASE_KINDS)("a password change (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let app: App;

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "100000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000" });
    users = new Users(server);
    const made = await createApp(server, "rp", {
      redirectUris: [RP],
      appType: WEB,
      authMethodType: BASIC,
      grantTypes: [AUTH_CODE, REFRESH],
      accessTokenType: BEARER,
    });
    const config = await client.discovery(new URL(server.baseUrl), made.clientId, made.clientSecret, client.ClientSecretBasic(made.clientSecret), {
      execute: [client.allowInsecureRequests],
    });
    app = { ...made, config };
  }, 120_000);
  afterAll(() => server?.close());

  async function start(params: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(app.config, {
      redirect_uri: RP,
      scope: "openid offline_access",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...params,
    });
    return { url: url.href, state, verifier };
  }

  const tokensOf = (s: { state: string; verifier: string }, page: Page) => {
    expect(page.left, `${page.status} ${page.url}\n${page.html}`).toBe(true);
    return client.authorizationCodeGrant(app.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
  };

  /** A person signed in with the password in a browser: its id, the browser, its refresh token. */
  async function signedIn() {
    const name = uniqueName("changer");
    const id = await users.create(humanUser(name, { password: PASSWORD }));
    const b = new Browser(server.baseUrl);
    const s = await start();
    let page = await b.open(s.url);
    page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
    page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    const tokens = await tokensOf(s, page);
    // Single sign-on works before the change.
    const again = await start();
    await tokensOf(again, await b.open(again.url));
    return { id, name, b, refreshToken: tokens.refresh_token! };
  }

  /** The login pages of a browser asked to sign in again: its login name where asked, then the new password; the page after it. */
  async function signInAgain(b: Browser, page: Page, name: string): Promise<Page> {
    expect(page.left, page.html).toBe(false);
    if (parseForms(page.html).some((f) => "loginName" in f.fields && f.visible.includes("loginName")))
      page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
    return b.submit(formWith(page.html, "password"), { password: NEW_PASSWORD }, page.url);
  }

  /** An administrator sets a new password, as after a suspected theft; in the next whole second (sign-ins are timed in seconds). */
  async function adminSetsPassword(id: string) {
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
    ok(await users.call("SetPassword", { id, password: { newPassword: NEW_PASSWORD } }));
  }

  it("signs the browser in again, with or without a prompt, and prompt=none answers login_required", async () => {
    const { id, name, b } = await signedIn();
    await adminSetsPassword(id);
    const plain = await start();
    const page = await b.open(plain.url);
    expect(page.left, page.html).toBe(false);

    const silent = await start({ prompt: "none" });
    const refused = await b.open(silent.url);
    expect(refused.left).toBe(true);
    expect(new URL(refused.url).searchParams.get("error")).toBe("login_required");

    // The new password signs in, and single sign-on works again after it.
    await tokensOf(plain, await signInAgain(b, page, name));
    const sso = await start({ prompt: "none" });
    await tokensOf(sso, await b.open(sso.url));
  });

  it("a known account chosen on the account chooser asks for the password again", async () => {
    const { id, b } = await signedIn();
    await adminSetsPassword(id);
    const s = await start({ prompt: "select_account" });
    let page = await b.open(s.url);
    const choice = parseForms(page.html).find((f) => f.fields.accountId === id);
    expect(choice, page.html).toBeDefined();
    page = await b.submit(choice!, {}, page.url);
    expect(page.left, page.html).toBe(false);
    expect(formWith(page.html, "password").visible).toEqual(["password"]);
    await tokensOf(s, await b.submit(formWith(page.html, "password"), { password: NEW_PASSWORD }, page.url));
  });

  it("refuses the refresh tokens of the sign-in (invalid_grant); a sign-in after the change gets working ones", async () => {
    const { id, name, b, refreshToken } = await signedIn();
    await adminSetsPassword(id);
    await expect(client.refreshTokenGrant(app.config, refreshToken)).rejects.toMatchObject({ error: "invalid_grant" });
    const s = await start();
    const tokens = await tokensOf(s, await signInAgain(b, await b.open(s.url), name));
    expect((await client.refreshTokenGrant(app.config, tokens.refresh_token!)).access_token).toBeTruthy();
  });
});
