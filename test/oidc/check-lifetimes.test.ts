import type { JsonObject } from "@bufbuild/protobuf";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { AUTH_CODE, BASIC, BEARER, REFRESH, WEB } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";
import { Browser, formWith, parseForms, type Page } from "./browser.js";
import { createApp, RP, type App } from "./external-helpers.js";

/*
 * auth_time in every ID token, and the check lifetimes of the login settings applied to single
 * sign-on (issue 35 §1; src/domain/user-factor/check-lifetimes.ts, src/oidc/login/kit/policy.ts):
 * a second factor older than second_factor_check_lifetime is asked again on the pages, with or
 * without a prompt (prompt=none: interaction_required); a password older than
 * password_check_lifetime signs in again (prompt=none: login_required).
 */

const PASSWORD = "Corr3ct-horse!";
const en = TEXTS.en;
const MFA = ["pwd", "otp", "mfa"];

describe.each(DATABASE_KINDS)("check lifetimes and auth_time (%s)", (kind) => {
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

  const loginSettings = async (orgId: string, settings: JsonObject) =>
    ok(await protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call("SetLoginSettings", { settings, ctx: { orgId } }, server.adminToken));

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

  /** A person of a new organization (its login settings are the test's), signed in with its password in a new browser; with a TOTP when `totp`. */
  async function signedIn(totp = false) {
    const org = await createOrg(server, uniqueName("Lifetimes"));
    const name = uniqueName("lifer");
    const id = await users.create(humanUser(name, { password: PASSWORD }), { orgId: org.id });
    let secret: string | undefined;
    if (totp) {
      secret = (ok(await users.call("AddTOTP", { id })).secret as string) ?? "";
      ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
    }
    const b = new Browser(server.baseUrl);
    const s = await start();
    let page = await b.open(s.url);
    page = await b.submit(formWith(page.html, "loginName"), { loginName: name }, page.url);
    page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    if (secret) page = await b.submit(formWith(page.html, "code"), { code: totpCode(secret, 1) }, page.url);
    const tokens = await tokensOf(s, page);
    return { id, orgId: org.id, b, secret, tokens, authTime: tokens.claims()!.auth_time as number };
  }

  /** Waits until a check made at `authTime` (whole seconds) is older than `seconds` for sure. */
  const outlive = (authTime: number, seconds: number) =>
    new Promise((resolve) => setTimeout(resolve, Math.max(0, (authTime + seconds + 1) * 1000 - Date.now() + 20)));

  it("puts auth_time into every ID token: without max_age, on single sign-on and on refresh, the time of the sign-in", async () => {
    const { b, tokens, authTime } = await signedIn();
    expect(authTime).toBeGreaterThan(0);
    expect(Math.abs(authTime - Date.now() / 1000)).toBeLessThan(60);
    const sso = await start();
    expect((await tokensOf(sso, await b.open(sso.url))).claims()!.auth_time).toBe(authTime);
    const refreshed = await client.refreshTokenGrant(app.config, tokens.refresh_token!);
    expect(refreshed.claims()!.auth_time).toBe(authTime);
  });

  it("asks a second factor older than second_factor_check_lifetime again on single sign-on: the code step without a prompt, interaction_required with prompt=none", async () => {
    const { id, orgId, b, authTime } = await signedIn(true);
    const recoveryCodes = ok(await users.call("GenerateRecoveryCodes", { id })).codes as string[];
    const within = await start({ prompt: "none" });
    expect((await tokensOf(within, await b.open(within.url))).claims()!).toMatchObject({ sub: id, amr: MFA });
    await loginSettings(orgId, { secondFactorCheckLifetime: { set: "1s" } });
    // From now, not from auth_time: on a busy machine the code was checked a second or more after the password.
    await outlive(Math.floor(Date.now() / 1000), 1);

    const silent = await start({ prompt: "none" });
    const refused = await b.open(silent.url);
    expect(refused.left).toBe(true);
    expect(new URL(refused.url).searchParams.get("error")).toBe("interaction_required");

    const again = await start();
    let page = await b.open(again.url);
    expect(page.left, page.html).toBe(false);
    expect(page.html).toContain(en.mfaTotpIntro);
    // The TOTP's next step is taken: a recovery code, one button away.
    page = await b.submit(
      parseForms(page.html).find((f) => f.fields.factor === "recovery_code" && f.fields.choose === "1") ?? expect.fail(page.html),
      {},
      page.url,
    );
    page = await b.submit(formWith(page.html, "code"), { code: recoveryCodes[0]! }, page.url);
    // The password still counted: the sign-in keeps its time.
    expect((await tokensOf(again, page)).claims()!).toMatchObject({ sub: id, amr: MFA, auth_time: authTime });
  });

  it("signs in again once the password is older than password_check_lifetime: the pages without a prompt, login_required with prompt=none", async () => {
    const { orgId, b, authTime } = await signedIn();
    await loginSettings(orgId, { passwordCheckLifetime: { set: "1s" } });
    await outlive(authTime, 1);
    const silent = await start({ prompt: "none" });
    const refused = await b.open(silent.url);
    expect(refused.left).toBe(true);
    expect(new URL(refused.url).searchParams.get("error")).toBe("login_required");
    const again = await start();
    const page = await b.open(again.url);
    expect(page.left, page.html).toBe(false);
    expect(formWith(page.html, "loginName")).toBeTruthy();
  });

  it("reads and resets the lifetimes like any login setting (10 days, 10 days and 12 h built in)", async () => {
    const org = await createOrg(server, uniqueName("Resolved"));
    const settings = protocolClient(PlatformLoginSettings, "grpc", server.baseUrl);
    const resolved = async () => ok(await settings.call("ResolveLoginSettings", { ctx: { orgId: org.id } }, server.adminToken)).settings;
    expect(await resolved()).toMatchObject({
      passwordCheckLifetime: { value: "864000s" },
      externalLoginCheckLifetime: { value: "864000s" },
      multiFactorCheckLifetime: { value: "43200s" },
    });
    await loginSettings(org.id, { passwordCheckLifetime: { set: "3600s" } });
    expect((await resolved()).passwordCheckLifetime).toMatchObject({ value: "3600s" });
    await loginSettings(org.id, { passwordCheckLifetime: { reset: true } });
    expect((await resolved()).passwordCheckLifetime).toMatchObject({ value: "864000s" });
    const refused = await settings.call(
      "SetLoginSettings",
      { settings: { multiFactorCheckLifetime: { set: "9000h" } }, ctx: { orgId: org.id } },
      server.adminToken,
    );
    expect(refused.ok).toBe(false);
  });
});
