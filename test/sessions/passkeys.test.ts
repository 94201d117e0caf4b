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
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient, type Client } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SoftwareAuthenticator, type Flags, type SoftwareCredential } from "../support/webauthn-authenticator.js";
import { createOrg, failed, humanUser, machineUser, ok, uniqueName, Users, type Msg } from "../users/helpers.js";
import { totpCode } from "../users/totp.js";

/**
 * Signing in with a passkey through PlatformSessions, black-box, with a software authenticator
 * (test/support/webauthn-authenticator.ts) answering the session's challenge as a browser
 * would: without a login name (the passkey names the user), the challenge answered once, the
 * signature counter that must move forward, answers the service must refuse and count; and a
 * login UI of one's own finishing authorization requests with such sessions (the `amr` they
 * give, the login settings that forbid a passkey alone); and security keys (U2F) as the second
 * factor after a password, as the login settings `second_factors` and `multi_factors` allow.
 */

const RP_ID = "localhost";
const PASSWORD = "Passkey-Sess10n!";
const LOGIN_UI = "https://login.example/ui";

describe.each(DATABASE_KINDS)("passkeys and security keys in sessions (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let rp: App;
  /** The token of the login UI's server: a machine user with the instance role LOGIN_CLIENT. */
  let ui: string;

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_OIDC_LOGIN_UI_URL: LOGIN_UI, PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" });
    users = new Users(server);
    rp = await createRp(server);
    const id = await users.create(machineUser(uniqueName("pk-ui")));
    ok(
      await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
        server.adminToken,
      ),
    );
    ui = (await users.pat(id)).token;
  }, 60_000);
  afterAll(() => server?.close());

  const sessions = (protocol: Protocol = "grpc"): Client => serviceClient(PlatformSessions, server.baseUrl, ui, protocol);
  const loginSettings = (settings: JsonObject, orgId: string) =>
    protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call("SetLoginSettings", { settings, ctx: { orgId } }, server.adminToken);
  const person = (orgId?: string) => users.create(humanUser(uniqueName("pks"), { password: PASSWORD }), orgId ? { orgId } : undefined);
  const sessionOf = async (id: string): Promise<Msg> => (await sessions().ok("GetSession", { id })).session;

  /** A software authenticator with a passkey registered for the user (through the API), and that credential. */
  async function withPasskey(userId: string, flags: Partial<Flags> = {}): Promise<{ authenticator: SoftwareAuthenticator; credential: SoftwareCredential }> {
    const authenticator = new SoftwareAuthenticator(server.baseUrl, flags);
    const started = ok(await users.call("StartPasskeyRegistration", { id: userId, domain: RP_ID }));
    // Registration always asks for user verification; the flags given are for signing in.
    const answer = authenticator.create(started.publicKeyCredentialCreationOptions, { flags: { uv: true } });
    ok(await users.call("FinishPasskeyRegistration", { id: userId, passkeyId: started.passkeyId, publicKeyCredential: answer, name: "Test key" }));
    return { authenticator, credential: authenticator.credentials[0]! };
  }

  interface Challenged {
    id: string;
    token: string;
    options: Msg;
  }
  /** CreateSession asking for a passkey challenge (with `checks` when given): the session and the challenge's options. */
  async function challenged(checks?: JsonObject, userVerificationRequirement?: string, protocol?: Protocol): Promise<Challenged> {
    const made = await sessions(protocol).ok("CreateSession", {
      ...(checks && { checks }),
      challenges: { webAuthN: { domain: RP_ID, ...(userVerificationRequirement && { userVerificationRequirement }) } },
    });
    return { id: made.sessionId, token: made.sessionToken, options: made.challenges.webAuthN.publicKeyCredentialRequestOptions };
  }
  /** PatchSession asking for a new passkey challenge. */
  async function challengeAgain(s: { id: string; token: string }): Promise<Challenged> {
    const patched = await sessions().ok("PatchSession", { id: s.id, sessionToken: s.token, challenges: { webAuthN: { domain: RP_ID } } });
    return { id: s.id, token: patched.sessionToken, options: patched.challenges.webAuthN.publicKeyCredentialRequestOptions };
  }
  const answer = (s: { id: string; token: string }, credentialAssertionData: object, protocol?: Protocol) =>
    sessions(protocol).call("PatchSession", {
      id: s.id,
      sessionToken: s.token,
      checks: { webAuthN: { credentialAssertionData: credentialAssertionData as JsonObject } },
    });
  const stateOf = async (userId: string) => (await users.get(userId)).state as string;

  const authRequests = () => protocolClient(PlatformAuthRequests, "grpc", server.baseUrl);

  /** An authorization request of the relying party in a fresh browser, sent to the login UI: its id there. */
  async function authorize(params: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(rp.config, {
      redirect_uri: RP,
      scope: "openid",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...params,
    });
    const browser = new Browser(server.baseUrl);
    const page = await browser.open(url);
    expect(page.url.startsWith(LOGIN_UI), page.url).toBe(true);
    return { browser, verifier, state, id: new URL(page.url).searchParams.get("authRequest")! };
  }
  const finalize = (flow: { id: string }, s: { id: string; token: string }) =>
    authRequests().call("FinalizeAuthRequest", { id: flow.id, sessionId: s.id, sessionToken: s.token }, ui);
  /** FinalizeAuthRequest, the callbackUrl in the request's browser, the code redeemed: the ID token's claims. */
  async function claimsOf(flow: Awaited<ReturnType<typeof authorize>>, s: { id: string; token: string }) {
    const { callbackUrl } = ok(await finalize(flow, s));
    return (await tokensOf(rp, flow, await flow.browser.open(callbackUrl))).claims()!;
  }

  describe("PatchSession with checks.webAuthN", () => {
    it.each(["grpc", "rest"] as const)(
      "without a login name: options for any passkey of the domain; the answer names the user and checks the passkey (%s)",
      async (protocol) => {
        const userId = await person();
        const { authenticator } = await withPasskey(userId);
        const s = await challenged(undefined, undefined, protocol);
        expect(s.options).toMatchObject({ rpId: RP_ID, userVerification: "required", challenge: expect.stringMatching(/^[\w-]{16,}$/) });
        expect(s.options.allowCredentials ?? []).toEqual([]);

        const patched = ok(await answer(s, authenticator.get(s.options), protocol));
        const session = await sessionOf(s.id);
        expect(session.factors.user).toMatchObject({ id: userId, verifiedAt: expect.any(String) });
        expect(session.factors.webAuthN).toEqual({ verifiedAt: expect.any(String), userVerified: true });
        expect(session.factors.password).toBeUndefined();

        // The challenge is answered: another answer to it, even a right one, is refused.
        const again = failed(await answer({ id: s.id, token: patched.sessionToken }, authenticator.get(s.options), protocol), Code.InvalidArgument);
        expect(again.message).toContain("no passkey challenge");
        expect((await sessionOf(s.id)).factors.webAuthN).toEqual(session.factors.webAuthN);
      },
    );

    it("with the user named first: options listing its passkeys; user verification as requested", async () => {
      const userId = await person();
      const { authenticator, credential } = await withPasskey(userId, { uv: false });
      const s = await challenged({ user: { userId } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED");
      expect(s.options).toMatchObject({
        rpId: RP_ID,
        userVerification: "discouraged",
        allowCredentials: [expect.objectContaining({ id: credential.id, type: "public-key" })],
      });
      ok(await answer(s, authenticator.get(s.options)));
      // userVerified false is proto3 JSON's default: left out.
      expect((await sessionOf(s.id)).factors.webAuthN).toEqual({ verifiedAt: expect.any(String) });

      // Where verification is required, an answer without it is refused.
      const required = await challenged({ user: { userId } });
      expect(failed(await answer(required, authenticator.get(required.options)), Code.InvalidArgument).message).toContain("checks.webAuthN");
      expect((await sessionOf(required.id)).factors.webAuthN).toBeUndefined();
    });

    it("CreateSession cannot carry checks.webAuthN (InvalidArgument): a challenge comes first; an answer to another challenge is refused", async () => {
      const userId = await person();
      const { authenticator } = await withPasskey(userId);
      const s = await challenged();
      const r = await sessions().call("CreateSession", {
        checks: { user: { userId }, webAuthN: { credentialAssertionData: authenticator.get(s.options) as unknown as JsonObject } },
      });
      expect(failed(r, Code.InvalidArgument).message).toContain("checks.webAuthN");
      expect(
        failed(
          await answer({ id: s.id, token: s.token }, authenticator.get(s.options, { challenge: Buffer.from("other").toString("base64url") })),
          Code.InvalidArgument,
        ).message,
      ).toContain("challenge");
    });

    it("a counter that does not move forward is refused and recorded on the user as a suspected clone; a wrong signature is not, whatever its counter", async () => {
      const userId = await person();
      const { authenticator } = await withPasskey(userId);
      const first = await challenged();
      ok(await answer(first, authenticator.get(first.options, { counter: 5 })));

      const before = (await users.get(userId)).details.sequence as string;
      // Anyone can send an unsigned answer naming someone's credential with any counter: only a signed one may raise the alarm.
      for (const counter of [undefined, 3]) {
        const wrongSignature = await challenged();
        const refusal = failed(
          await answer(wrongSignature, authenticator.get(wrongSignature.options, { wrongSignature: true, ...(counter !== undefined && { counter }) })),
          Code.InvalidArgument,
        );
        expect(refusal.message, `counter ${counter}`).not.toContain("counter");
        expect((await users.get(userId)).details.sequence, `a wrong signature records no clone (counter ${counter})`).toBe(before);
      }

      for (const counter of [5, 4]) {
        const copy = await challenged();
        expect(failed(await answer(copy, authenticator.get(copy.options, { counter })), Code.InvalidArgument).message, `counter ${counter}`).toContain(
          "counter",
        );
        expect((await sessionOf(copy.id)).factors.user, "the session names no user").toBeUndefined();
      }
      expect(BigInt((await users.get(userId)).details.sequence) - BigInt(before)).toBe(2n);
      const recorded = await server.service.store.db
        .selectFrom("events")
        .select(["event_type", "payload"])
        .where("aggregate_type", "=", "user")
        .where("aggregate_id", "=", userId)
        .where("event_type", "=", "user.passkey.clone_suspected")
        .execute();
      const [passkey] = ok(await users.call("ListPasskeys", { id: userId })).result;
      expect(recorded.map((e) => e.payload)).toEqual([{ id: passkey.id }, { id: passkey.id }]);
    });

    it("another user's passkey on a session with a user is refused; the session keeps its user and gains no factor", async () => {
      const owner = await person();
      const { authenticator, credential } = await withPasskey(owner);
      const someone = await person();
      await withPasskey(someone);
      const s = await challenged({ user: { userId: someone } });
      expect(s.options.allowCredentials.map((c: Msg) => c.id)).not.toContain(credential.id);
      expect(failed(await answer(s, authenticator.get(s.options, { credential })), Code.InvalidArgument).message).toContain("another user's");
      const session = await sessionOf(s.id);
      expect(session.factors.user.id).toBe(someone);
      expect(session.factors.webAuthN).toBeUndefined();
    });

    it("wrong signatures count toward the lockout of the session's user (max_password_attempts 2), not of the user an unsigned answer merely names; a locked user's passkey signs in no more", async () => {
      const org = await createOrg(server, uniqueName("pk-strict"));
      ok(await loginSettings({ maxPasswordAttempts: { set: 2 } }, org.id));
      const userId = await person(org.id);
      const { authenticator } = await withPasskey(userId);

      const nameless = await challenged();
      failed(await answer(nameless, authenticator.get(nameless.options, { wrongSignature: true })), Code.InvalidArgument);
      expect(await stateOf(userId)).toBe("USER_STATE_ACTIVE");
      // The failed answer left the token as it was, and used up the challenge.
      failed(await answer(nameless, authenticator.get(nameless.options)), Code.InvalidArgument);
      const named = await challenged({ user: { userId } });
      failed(await answer(named, authenticator.get(named.options, { wrongSignature: true })), Code.InvalidArgument);
      // The nameless failure counted against nobody: one failure so far.
      expect(await stateOf(userId)).toBe("USER_STATE_ACTIVE");
      const again = await challenged({ user: { userId } });
      failed(await answer(again, authenticator.get(again.options, { wrongSignature: true })), Code.InvalidArgument);
      expect(await stateOf(userId)).toBe("USER_STATE_LOCKED");

      const after = await challengeAgain(nameless);
      expect(failed(await answer(after, authenticator.get(after.options)), Code.InvalidArgument).message).toContain("cannot sign in");
      expect((await sessionOf(after.id)).factors.user).toBeUndefined();
    });
  });

  describe("a login UI of one's own finishing with a passkey session", () => {
    /** A session of the user's passkey alone, without a login name. */
    async function passkeySession(authenticator: SoftwareAuthenticator) {
      const s = await challenged();
      return { id: s.id, token: ok(await answer(s, authenticator.get(s.options))).sessionToken as string };
    }

    it("a device-bound user-verified passkey alone signs in: amr [user, hwk, mfa], auth_time the passkey's check", async () => {
      const userId = await person();
      const { authenticator } = await withPasskey(userId);
      // max_age makes the provider put auth_time into the ID token.
      const flow = await authorize({ max_age: "600" });
      const s = await passkeySession(authenticator);
      const claims = await claimsOf(flow, s);
      const checkedAt = Math.floor(Date.parse((await sessionOf(s.id)).factors.webAuthN.verifiedAt) / 1000);
      expect(claims).toMatchObject({ sub: userId, amr: ["user", "hwk", "mfa"], auth_time: checkedAt });
    });

    it("a synced passkey (backup eligible and backed up) alone: amr [user, swk, mfa]", async () => {
      const userId = await person();
      const { authenticator } = await withPasskey(userId, { be: true, bs: true });
      const flow = await authorize();
      expect(await claimsOf(flow, await passkeySession(authenticator))).toMatchObject({ sub: userId, amr: ["user", "swk", "mfa"] });
    });

    it("with login settings passwordlessType NOT_ALLOWED a passkey alone is FailedPrecondition; with the password too it signs in", async () => {
      const org = await createOrg(server, uniqueName("pk-nopwless"));
      ok(await loginSettings({ passwordlessType: { set: "PASSWORDLESS_TYPE_NOT_ALLOWED" } }, org.id));
      const userId = await person(org.id);
      const { authenticator } = await withPasskey(userId);
      const flow = await authorize();
      const s = await passkeySession(authenticator);
      expect(failed(await finalize(flow, s), Code.FailedPrecondition).message).toContain("passkey alone");
      const withPassword = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { password: { password: PASSWORD } } }));
      expect((await claimsOf(flow, { id: s.id, token: withPassword.sessionToken })).amr).toEqual(["pwd", "user", "hwk", "mfa"]);
    });

    it("a password and a security key without user verification: amr [pwd, hwk, mfa]; the key alone is not enough", async () => {
      const userId = await person();
      const { authenticator } = await withPasskey(userId, { uv: false });
      const flow = await authorize();
      const keyOnly = await challenged({ user: { userId } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED");
      const keyOnlyToken = ok(await answer(keyOnly, authenticator.get(keyOnly.options))).sessionToken as string;
      expect(failed(await finalize(flow, { id: keyOnly.id, token: keyOnlyToken }), Code.FailedPrecondition).message).toContain("no user-verified passkey");

      const s = await challenged({ user: { userId }, password: { password: PASSWORD } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED");
      const patched = ok(await answer(s, authenticator.get(s.options)));
      expect((await sessionOf(s.id)).factors).toMatchObject({ password: { verifiedAt: expect.any(String) }, webAuthN: { verifiedAt: expect.any(String) } });
      expect((await sessionOf(s.id)).factors.webAuthN.userVerified).toBeUndefined();
      expect(await claimsOf(flow, { id: s.id, token: patched.sessionToken })).toMatchObject({ sub: userId, amr: ["pwd", "hwk", "mfa"] });
    });
  });
  describe("security keys as the second factor, finishing a login UI's authorization", () => {
    /** A security key registered for the user through the API (a key without a PIN: no user verification unless `flags` say so). */
    async function withSecurityKey(userId: string, flags: Partial<Flags> = {}) {
      const authenticator = new SoftwareAuthenticator(server.baseUrl, { uv: false, ...flags });
      const started = ok(await users.call("StartU2FRegistration", { id: userId, domain: RP_ID }));
      ok(
        await users.call("FinishU2FRegistration", {
          id: userId,
          u2fId: started.u2fId,
          publicKeyCredential: authenticator.create(started.publicKeyCredentialCreationOptions),
          name: "YubiKey",
        }),
      );
      return { authenticator, credential: authenticator.credentials[0]!, u2fId: started.u2fId as string };
    }
    /** A session with the user's password and its answer to a security key challenge (user verification discouraged, as a second factor asks): id and token. */
    async function passwordAndKey(userId: string, authenticator: SoftwareAuthenticator, protocol: Protocol = "grpc") {
      const s = await challenged({ user: { userId }, password: { password: PASSWORD } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED", protocol);
      return { id: s.id, token: ok(await answer(s, authenticator.get(s.options), protocol)).sessionToken as string, options: s.options };
    }
    const passwordOnly = async (userId: string) => {
      const made = await sessions().ok("CreateSession", { checks: { user: { userId }, password: { password: PASSWORD } } });
      return { id: made.sessionId as string, token: made.sessionToken as string };
    };

    it.each(["grpc", "rest"] as const)(
      "a password and a security key: the challenge lists the key; amr [pwd, hwk, mfa] and auth_time of the older check (%s)",
      async (protocol) => {
        const userId = await person();
        const { authenticator, credential } = await withSecurityKey(userId);
        const flow = await authorize({ max_age: "600" });
        const s = await passwordAndKey(userId, authenticator, protocol);
        expect(s.options).toMatchObject({
          rpId: RP_ID,
          userVerification: "discouraged",
          allowCredentials: [expect.objectContaining({ id: credential.id, type: "public-key" })],
        });
        const factors = (await sessionOf(s.id)).factors;
        expect(factors.webAuthN).toEqual({ verifiedAt: expect.any(String) });
        const claims = await claimsOf(flow, s);
        expect(claims).toMatchObject({ sub: userId, amr: ["pwd", "hwk", "mfa"], auth_time: Math.floor(Date.parse(factors.password.verifiedAt) / 1000) });
      },
    );

    it("a person with a security key must present it after the password (it is asked as any factor it has); the key alone is no sign-in, even when it verified the person", async () => {
      const userId = await person();
      const { authenticator } = await withSecurityKey(userId, { uv: true });
      expect(ok(await users.call("ListAuthMethods", { id: userId })).authMethodTypes).toEqual(["AUTH_METHOD_TYPE_PASSWORD", "AUTH_METHOD_TYPE_U2F"]);
      const flow = await authorize();
      expect(failed(await finalize(flow, await passwordOnly(userId)), Code.FailedPrecondition).message).toContain("second factor");

      // Verified by the key (a PIN): still a security key, one factor, no sign-in by itself.
      const keyOnly = await challenged({ user: { userId } });
      const keyOnlyToken = ok(await answer(keyOnly, authenticator.get(keyOnly.options))).sessionToken as string;
      expect((await sessionOf(keyOnly.id)).factors.webAuthN).toEqual({ verifiedAt: expect.any(String), userVerified: true });
      expect(failed(await finalize(flow, { id: keyOnly.id, token: keyOnlyToken }), Code.FailedPrecondition).message).toContain("no user-verified passkey");
      // With the password: a second factor, and no `user` in the amr (a security key is not two factors).
      expect((await claimsOf(flow, await passwordAndKey(userId, authenticator))).amr).toEqual(["pwd", "hwk", "mfa"]);
    });

    it("a key whose counter goes back is refused and recorded (user.u2f.clone_suspected); the session gains no factor", async () => {
      const userId = await person();
      const { authenticator, u2fId } = await withSecurityKey(userId);
      const first = await challenged({ user: { userId } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED");
      ok(await answer(first, authenticator.get(first.options, { counter: 7 })));
      const copy = await challenged({ user: { userId }, password: { password: PASSWORD } }, "USER_VERIFICATION_REQUIREMENT_DISCOURAGED");
      expect(failed(await answer(copy, authenticator.get(copy.options, { counter: 7 })), Code.InvalidArgument).message).toContain("counter");
      expect((await sessionOf(copy.id)).factors.webAuthN).toBeUndefined();
      const recorded = await server.service.store.db
        .selectFrom("events")
        .select("payload")
        .where("aggregate_id", "=", userId)
        .where("event_type", "=", "user.u2f.clone_suspected")
        .execute();
      expect(recorded.map((e) => e.payload)).toEqual([{ id: u2fId }]);
    });

    it("with second_factors without U2F a security key is not counted: forced MFA asks for an allowed factor; a TOTP does", async () => {
      const org = await createOrg(server, uniqueName("u2f-off"));
      ok(await loginSettings({ forceMfa: { set: true }, secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_TOTP"] } } }, org.id));
      const userId = await person(org.id);
      const { authenticator } = await withSecurityKey(userId);
      const flow = await authorize();
      const s = await passwordAndKey(userId, authenticator);
      expect(failed(await finalize(flow, s), Code.FailedPrecondition).message).toContain("second factor the login settings allow");

      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const withTotp = ok(await sessions().call("PatchSession", { id: s.id, sessionToken: s.token, checks: { totp: { code: totpCode(secret, 1) } } }));
      // The key's check stays in the amr: it was checked, though it was not the factor that counted.
      expect((await claimsOf(flow, { id: s.id, token: withTotp.sessionToken })).amr).toEqual(["pwd", "otp", "hwk", "mfa"]);
    });

    it("multi_factors: a passkey after a password counts where PASSKEY is allowed, not where the list is empty (passwordless not allowed either)", async () => {
      const strict = await createOrg(server, uniqueName("mf-none"));
      ok(
        await loginSettings(
          {
            passwordlessType: { set: "PASSWORDLESS_TYPE_NOT_ALLOWED" },
            multiFactors: { set: { types: [] } },
            secondFactors: { set: { types: ["SECOND_FACTOR_TYPE_TOTP"] } },
            forceMfa: { set: true },
          },
          strict.id,
        ),
      );
      const userId = await person(strict.id);
      const { authenticator } = await withPasskey(userId);
      const flow = await authorize();
      const s = await challenged({ user: { userId }, password: { password: PASSWORD } });
      const patched = ok(await answer(s, authenticator.get(s.options)));
      expect(failed(await finalize(flow, { id: s.id, token: patched.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");

      ok(await loginSettings({ multiFactors: { set: { types: ["MULTI_FACTOR_TYPE_PASSKEY"] } } }, strict.id));
      expect((await claimsOf(flow, { id: s.id, token: patched.sessionToken })).amr).toEqual(["pwd", "user", "hwk", "mfa"]);
    });

    it("multi_factors: a person whose passkey is a multi-factor is asked for it after a password; where it is not, the password alone signs in", async () => {
      const asked = await person();
      await withPasskey(asked);
      expect(failed(await finalize(await authorize(), await passwordOnly(asked)), Code.FailedPrecondition).message).toContain("second factor");

      const org = await createOrg(server, uniqueName("mf-off"));
      ok(await loginSettings({ multiFactors: { set: { types: [] } } }, org.id));
      const notAsked = await person(org.id);
      await withPasskey(notAsked);
      expect((await claimsOf(await authorize(), await passwordOnly(notAsked))).amr).toEqual(["pwd"]);
    });
  });
});
