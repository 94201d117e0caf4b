import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformAuthRequests } from "../../gen/platform/resources/oidc/v3alpha/auth_request_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { Browser } from "../oidc/browser.js";
import { RP, createRp, tokensOf, type App } from "../oidc/external-helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, failed, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";
import { authorizeAtLoginUi } from "./login-ui-flow.js";

/*
 * A login UI of the product's own (src/oidc/provider/login-ui.ts, src/oidc/helpers/auth-requests.ts),
 * black-box: where the provider sends the browser, what GetAuthRequest shows, and the whole
 * sign-in driven by openid-client and the session API alone, as such a UI would: the UI's
 * server calls CreateSession/PatchSession and FinalizeAuthRequest with a LOGIN_CLIENT's
 * token, the browser only follows the answered callbackUrl.
 */

const SYSTEM_UI = "https://login.example/ui?x=1";
const PASSWORD = "Corr3ct-horse!";
const MFA = ["pwd", "otp", "mfa"];
/** The ID token's acr (src/oidc/helpers/acr.ts), from its amr. */
const ACR_SFA = "urn:platform:acr:sfa";
const ACR_MFA = "urn:platform:acr:mfa";
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe.each(DATABASE_KINDS)("a login UI of one's own (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let rp: App;
  /** The token of the UI's server: a machine user with the instance role LOGIN_CLIENT. */
  let ui: string;
  const base = () => server.baseUrl;
  const sessions = () => protocolClient(PlatformSessions, "grpc", base());
  const authRequests = () => protocolClient(PlatformAuthRequests, "grpc", base());
  const loginSettings = async (settings: JsonObject, ctx?: JsonObject) =>
    protocolClient(PlatformLoginSettings, "grpc", base()).call("SetLoginSettings", { settings, ...(ctx && { ctx }) }, server.adminToken);

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_OIDC_LOGIN_UI_URL: SYSTEM_UI,
      PLATFORM_LOGIN_RATE_PER_IP: "1000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000",
    });
    users = new Users(server);
    rp = await createRp(server);
    const id = await users.create(machineUser(uniqueName("login-ui")));
    ok(
      await protocolClient(PlatformMemberships, "grpc", base()).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
        server.adminToken,
      ),
    );
    ui = (await users.pat(id)).token;
  }, 60_000);
  afterAll(() => server?.close());

  /** A person with a password, in the default organization unless `orgId`. */
  const person = (orgId?: string) => users.create(humanUser(uniqueName("ui"), { password: PASSWORD }), orgId ? { orgId } : undefined);

  /** An authorization request of the relying party in a fresh browser: where the provider sent it, and the request's id there. */
  const authorize = (params: Record<string, string> = {}) => authorizeAtLoginUi(base(), rp, params);
  type Flow = Awaited<ReturnType<typeof authorize>>;

  /** CreateSession with the user and, unless `password: false`, its password: the id and token. */
  async function session(userId: string, opts: { password?: boolean } = {}) {
    const checks = { user: { userId }, ...(opts.password !== false && { password: { password: PASSWORD } }) };
    const made = ok(await sessions().call("CreateSession", { checks }, ui));
    return { id: made.sessionId as string, token: made.sessionToken as string };
  }
  const finalize = (id: string, s: { id: string; token: string }, token = ui) =>
    authRequests().call("FinalizeAuthRequest", { id, sessionId: s.id, sessionToken: s.token }, token);

  /** Finalizes, follows the callbackUrl in the request's browser, and redeems the code at the relying party: the ID token's claims. */
  async function finish(flow: Flow, s: { id: string; token: string }) {
    const { callbackUrl } = ok(await finalize(flow.id, s));
    // Nothing is submitted on the way: the built-in consent step grants at once.
    return (await tokensOf(rp, flow, await flow.browser.open(callbackUrl))).claims()!;
  }

  describe("where the provider sends the browser", () => {
    it("to PLATFORM_OIDC_LOGIN_UI_URL with authRequest=<id>; GetAuthRequest shows the request as sent", async () => {
      const flow = await authorize({ scope: "openid profile", prompt: "login", login_hint: "someone@example.com", max_age: "30", ui_locales: "de en" });
      expect(flow.sentTo.origin + flow.sentTo.pathname).toBe("https://login.example/ui");
      expect([...flow.sentTo.searchParams.keys()]).toEqual(["x", "authRequest"]);
      expect(flow.sentTo.searchParams.get("x")).toBe("1");
      expect(flow.id).not.toBe("");
      const { authRequest } = ok(await authRequests().call("GetAuthRequest", { id: flow.id }, ui));
      expect(authRequest).toMatchObject({
        id: flow.id,
        clientId: rp.clientId,
        scope: ["openid", "profile"],
        redirectUri: RP,
        prompt: ["login"],
        loginHint: "someone@example.com",
        maxAge: "30s",
        uiLocales: ["de", "en"],
      });
      expect(Math.abs(Date.parse(authRequest.creationDate) - Date.now())).toBeLessThan(60_000);
    });

    it("GetAuthRequest answers a max_age longer than a Duration holds over Connect JSON and REST, clamped to the longest", async () => {
      const flow = await authorize({ max_age: "99999999999999" });
      for (const protocol of ["connect", "rest"] as const) {
        const { authRequest } = ok(await protocolClient(PlatformAuthRequests, protocol, base()).call("GetAuthRequest", { id: flow.id }, ui));
        expect(authRequest.maxAge, protocol).toBe("315576000000s");
      }
    });

    it("to the instance's login_ui_url when set, for org-scoped requests too; an organization cannot set one; a reset falls back", async () => {
      const org = await createOrg(server, uniqueName("ui-org"));
      const orgScope = { scope: `openid urn:platform:iam:org:id:${org.id}` };
      const where = async (params: Record<string, string> = {}) => {
        const { sentTo } = await authorize(params);
        sentTo.searchParams.delete("authRequest");
        return sentTo.href;
      };
      try {
        ok(await loginSettings({ loginUiUrl: { set: "https://instance.example/login?tenant=a" } }));
        // Anyone can put an organization's id into a scope: its owner must not choose where the instance's people type passwords.
        failed(await loginSettings({ loginUiUrl: { set: "https://org.example/login" } }, { orgId: org.id }), Code.InvalidArgument);
        expect(await where()).toBe("https://instance.example/login?tenant=a");
        expect(await where(orgScope)).toBe("https://instance.example/login?tenant=a");
      } finally {
        ok(await loginSettings({ loginUiUrl: { reset: true } }));
      }
      expect(await where()).toBe(SYSTEM_UI);
      expect(await where(orgScope)).toBe(SYSTEM_UI);
    });

    it("login_ui_url that is not an absolute https URL (http only on localhost) without a fragment is InvalidArgument", async () => {
      for (const value of ["ftp://login.example/ui", "/ui/custom", "login.example/ui", "https://login.example/ui#step", "http://login.example/ui"]) {
        expect(failed(await loginSettings({ loginUiUrl: { set: value } }), Code.InvalidArgument).message, value).toContain("login_ui_url");
      }
      expect((await authorize()).sentTo.origin).toBe("https://login.example");
    });
  });

  describe("the sign-in through the session API", () => {
    it("CreateSession with the password, FinalizeAuthRequest, the callbackUrl: a code for the relying party, amr [pwd]", async () => {
      const userId = await person();
      const flow = await authorize({ max_age: "600" });
      const s = await session(userId);
      const claims = await finish(flow, s);
      const checked = ok(await sessions().call("GetSession", { id: s.id }, ui)).session.factors.password.verifiedAt as string;
      expect(claims).toMatchObject({ sub: userId, amr: ["pwd"], acr: ACR_SFA, auth_time: seconds(checked) });
    });

    it("with a TOTP: FailedPrecondition naming the second factor until PatchSession checks a code; then amr [pwd, otp, mfa], auth_time the password's check", async () => {
      const userId = await person();
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const flow = await authorize({ max_age: "600" });
      const s = await session(userId);
      expect(failed(await finalize(flow.id, s), Code.FailedPrecondition).message).toContain("second factor");
      // The code in a later second (auth_time counts whole ones): a fresh code does not make an older password new.
      const passwordAt = seconds(ok(await sessions().call("GetSession", { id: s.id }, ui)).session.factors.password.verifiedAt);
      await new Promise((resolve) => setTimeout(resolve, (passwordAt + 1) * 1000 - Date.now() + 20));
      // VerifyTOTP took the code of now: a code is accepted once, so the next step's.
      const patched = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { totp: { code: totpCode(secret, 1) } } }, ui));
      const claims = await finish(flow, { id: s.id, token: patched.sessionToken });
      const factors = ok(await sessions().call("GetSession", { id: s.id }, ui)).session.factors;
      expect(seconds(factors.totp.verifiedAt)).toBeGreaterThan(passwordAt);
      expect(claims).toMatchObject({ sub: userId, amr: MFA, acr: ACR_MFA, auth_time: passwordAt });
    });

    it("with force_mfa in the user's organization and no factor set up, a password is not enough", async () => {
      const org = await createOrg(server, uniqueName("ui-mfa"));
      ok(await loginSettings({ forceMfa: { set: true } }, { orgId: org.id }));
      const flow = await authorize();
      expect(failed(await finalize(flow.id, await session(await person(org.id))), Code.FailedPrecondition).message).toContain("second factor");
      // The same request, finished by a person of an organization that does not force it.
      expect((await finish(flow, await session(await person()))).amr).toEqual(["pwd"]);
    });
  });

  describe("acr_values", () => {
    it("urn:platform:acr:mfa: a password alone is refused as under force_mfa; with a TOTP checked amr [pwd, otp, mfa] and acr mfa", async () => {
      const userId = await person();
      const flow = await authorize({ acr_values: ACR_MFA });
      expect(failed(await finalize(flow.id, await session(userId)), Code.FailedPrecondition).message).toContain("second factor");
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const s = await session(userId);
      const patched = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { totp: { code: totpCode(secret, 1) } } }, ui));
      expect(await finish(flow, { id: s.id, token: patched.sessionToken })).toMatchObject({ sub: userId, amr: MFA, acr: ACR_MFA });
    });

    it("that accept single-factor too ask for nothing more: amr [pwd], acr sfa", async () => {
      const flow = await authorize({ acr_values: `${ACR_SFA} ${ACR_MFA}` });
      expect(await finish(flow, await session(await person()))).toMatchObject({ amr: ["pwd"], acr: ACR_SFA });
    });
  });

  describe("FinalizeAuthRequest refuses", () => {
    it("a token that is not the session's current one (PermissionDenied); a session without a password (FailedPrecondition)", async () => {
      const userId = await person();
      const flow = await authorize();
      const s = await session(userId);
      const other = await session(userId);
      failed(await finalize(flow.id, { id: s.id, token: other.token }), Code.PermissionDenied);
      const rotated = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { password: { password: PASSWORD } } }, ui));
      expect(failed(await finalize(flow.id, s), Code.PermissionDenied).message, "the token before the patch").toContain("session_token");
      expect(failed(await finalize(flow.id, await session(userId, { password: false })), Code.FailedPrecondition).message).toContain("password");
      ok(await finalize(flow.id, { id: s.id, token: rotated.sessionToken }));
    });

    it("a user whose organization's login settings forbid password sign-in, or ask for a verified email the user lacks (FailedPrecondition)", async () => {
      const noPasswords = await createOrg(server, uniqueName("ui-nopw"));
      ok(await loginSettings({ allowUsernamePassword: { set: false } }, { orgId: noPasswords.id }));
      const flow = await authorize();
      expect(failed(await finalize(flow.id, await session(await person(noPasswords.id))), Code.FailedPrecondition).message).toContain(
        "do not allow signing in with a password",
      );
      const verified = await createOrg(server, uniqueName("ui-verified"));
      ok(await loginSettings({ requireVerifiedEmail: { set: true } }, { orgId: verified.id }));
      // People made by the API here have unverified addresses (humanUser gives no isVerified).
      expect(failed(await finalize(flow.id, await session(await person(verified.id))), Code.FailedPrecondition).message).toContain("verified email");
      expect((await finish(flow, await session(await person()))).amr).toEqual(["pwd"]);
    });

    it("a password changed since the session checked it, or one the user must change (FailedPrecondition)", async () => {
      const userId = await person();
      const flow = await authorize();
      const s = await session(userId);
      ok(await users.call("SetPassword", { id: userId, password: { newPassword: "N3w-horse-staple!" } }));
      expect(failed(await finalize(flow.id, s), Code.FailedPrecondition).message).toContain("password of session");
      const mustChange = await users.create(humanUser(uniqueName("ui"), { password: PASSWORD, passwordChangeRequired: true }));
      expect(failed(await finalize(flow.id, await session(mustChange)), Code.FailedPrecondition).message).toContain("new password");
      expect((await finish(flow, await session(await person()))).amr).toEqual(["pwd"]);
    });

    it("a second factor the login settings do not allow (FailedPrecondition): SMS codes where only a TOTP counts; the TOTP is fine", async () => {
      const org = await createOrg(server, uniqueName("ui-totp"));
      ok(await loginSettings({ secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_TOTP"] } } }, { orgId: org.id }));
      const phone = { number: `+4179${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`, isVerified: true };
      const userId = await users.create(humanUser(uniqueName("ui"), { password: PASSWORD, phone }), { orgId: org.id });
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      ok(await users.call("AddOTPSMS", { id: userId }));
      const flow = await authorize();

      const bySms = ok(
        await sessions().call(
          "CreateSession",
          { checks: { user: { userId }, password: { password: PASSWORD } }, challenges: { otpSms: { returnCode: true } } },
          ui,
        ),
      );
      const smsChecked = ok(
        await sessions().call(
          "PatchSession",
          { id: bySms.sessionId, sessionToken: bySms.sessionToken, checks: { otpSms: { code: bySms.challenges.otpSms } } },
          ui,
        ),
      );
      expect(failed(await finalize(flow.id, { id: bySms.sessionId, token: smsChecked.sessionToken }), Code.FailedPrecondition).message).toContain(
        "second factor",
      );

      const s = await session(userId);
      const patched = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { totp: { code: totpCode(secret, 1) } } }, ui));
      expect((await finish(flow, { id: s.id, token: patched.sessionToken })).amr).toEqual(MFA);
    });

    it("a user of another organization than the scope's (FailedPrecondition); one of the organization is fine", async () => {
      const org = await createOrg(server, uniqueName("ui-scope"));
      const flow = await authorize({ scope: `openid urn:platform:iam:org:id:${org.id}` });
      expect(failed(await finalize(flow.id, await session(await person())), Code.FailedPrecondition).message).toContain("organization");
      const member = await person(org.id);
      expect((await finish(flow, await session(member))).sub).toBe(member);
    });

    it("auth_time without max_age, and a password older than password_check_lifetime (FailedPrecondition) until checked again", async () => {
      const org = await createOrg(server, uniqueName("ui-lifetime"));
      const userId = await person(org.id);
      const old = await session(userId);
      const checkedAt = seconds(ok(await sessions().call("GetSession", { id: old.id }, ui)).session.factors.password.verifiedAt);
      expect(await finish(await authorize(), old)).toMatchObject({ sub: userId, auth_time: checkedAt });
      ok(await loginSettings({ passwordCheckLifetime: { set: "1s" } }, { orgId: org.id }));
      await new Promise((resolve) => setTimeout(resolve, (checkedAt + 2) * 1000 - Date.now() + 20));
      const flow = await authorize();
      expect(failed(await finalize(flow.id, old), Code.FailedPrecondition).message).toContain("check lifetime");
      const again = ok(await sessions().call("PatchSession", { id: old.id, sessionToken: old.token, checks: { password: { password: PASSWORD } } }, ui));
      expect((await finish(flow, { id: old.id, token: again.sessionToken })).sub).toBe(userId);
    });

    it("prompt=login and max_age=1 with a check older than the request (FailedPrecondition); a check after it is fine", async () => {
      const userId = await person();
      const old = await session(userId);
      const checkedAt = seconds(ok(await sessions().call("GetSession", { id: old.id }, ui)).session.factors.password.verifiedAt);
      // Times are whole seconds: two boundaries later the check is older than the request and than max_age=1.
      await new Promise((resolve) => setTimeout(resolve, (checkedAt + 2) * 1000 - Date.now() + 20));

      const login = await authorize({ prompt: "login" });
      expect(failed(await finalize(login.id, old), Code.FailedPrecondition).message).toContain("prompt=login");
      expect((await finish(login, await session(userId))).sub).toBe(userId);

      const maxAge = await authorize({ max_age: "1" });
      expect(failed(await finalize(maxAge.id, old), Code.FailedPrecondition).message).toContain("max_age");
      const again = ok(await sessions().call("PatchSession", { id: old.id, sessionToken: old.token, checks: { password: { password: PASSWORD } } }, ui));
      expect((await finish(maxAge, { id: old.id, token: again.sessionToken })).sub).toBe(userId);
    });

    it("finishing a request twice (FailedPrecondition), and a request that does not exist (NotFound)", async () => {
      const userId = await person();
      const flow = await authorize();
      const s = await session(userId);
      ok(await finalize(flow.id, s));
      expect(failed(await finalize(flow.id, s), Code.FailedPrecondition).message).toContain("finished");
      failed(await finalize("no-such-request", s), Code.NotFound);
      failed(await authRequests().call("GetAuthRequest", { id: "no-such-request" }, ui), Code.NotFound);
    });
  });

  it("a LOGIN_CLIENT may call both RPCs; a plain person and an ORG_OWNER may not (PermissionDenied)", async () => {
    const plainId = await person();
    const plain = (await users.pat(plainId)).token;
    const org = await createOrg(server, uniqueName("ui-owner"));
    const ownerId = await users.create(machineUser(uniqueName("owner")));
    ok(
      await protocolClient(PlatformMemberships, "grpc", base()).call(
        "CreateMembership",
        { membership: { userId: ownerId, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const owner = (await users.pat(ownerId)).token;
    const flow = await authorize({ scope: `openid urn:platform:iam:org:id:${org.id}` });
    const s = await session(await person(org.id));
    const codeOf = (r: Awaited<ReturnType<typeof finalize>>) => (r.ok ? "ok" : Code[r.code]);
    for (const [who, token] of [
      ["plain", plain],
      ["ORG_OWNER", owner],
    ] as const) {
      const answers = [await authRequests().call("GetAuthRequest", { id: flow.id }, token), await finalize(flow.id, s, token)];
      expect(answers.map(codeOf), who).toEqual(["PermissionDenied", "PermissionDenied"]);
    }
    expect(ok(await authRequests().call("GetAuthRequest", { id: flow.id }, ui)).authRequest.id).toBe(flow.id);
    ok(await finalize(flow.id, s, ui));
  });

  it("a callbackUrl followed by another browser (without the request's cookies) yields no code; the browser that asked still gets it", async () => {
    const userId = await person();
    const flow = await authorize();
    const { callbackUrl } = ok(await finalize(flow.id, await session(userId)));
    const page = await new Browser(base()).open(callbackUrl);
    expect(page.left, `went to ${page.url}`).toBe(false);
    expect(page.status).toBe(400);
    expect(page.hops.some((h) => h.location?.startsWith(RP))).toBe(false);
    expect((await tokensOf(rp, flow, await flow.browser.open(callbackUrl))).claims()!.sub).toBe(userId);
  });
});

describe.each(DATABASE_KINDS)("without a login UI (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  }, 60_000);
  afterAll(() => server?.close());

  it("the authorization request goes to the built-in login pages", async () => {
    const rp = await createRp(server);
    const url = client.buildAuthorizationUrl(rp.config, {
      redirect_uri: RP,
      scope: "openid",
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
    });
    const first = await new Browser(server.baseUrl).fetch(url);
    expect(first.status).toBe(303);
    expect(new URL(first.headers.get("location")!, server.baseUrl).href).toMatch(new RegExp(`^${server.baseUrl}/ui/login/[^/?]+$`));
  });
});
