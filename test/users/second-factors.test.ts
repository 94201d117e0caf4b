import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { TOTP, URI } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { expectNothingSecret, failed, humanUser, machineUser, ok, uniqueName, Users, type Msg } from "./helpers.js";
import { gitlabIdp, linkAccount } from "./idp-links.js";
import { totpCode, totpCodeOnlyOf, wrongTotpCode } from "./totp.js";

/**
 * The second factors of PlatformUsers: a TOTP authenticator (pending until a first code of
 * it), one-time codes by email and SMS (only to a verified address or number), recovery
 * codes, ListAuthMethods, people acting on themselves (and the login settings' force_mfa
 * keeping their last factor), and the REST paths. Codes are computed here from the answered
 * secret, as an authenticator app does.
 */

const PASSWORD = "Factor#Pass1";
/** The instance's name, the issuer of its authenticators: characters a URI must escape. */
const ISSUER = "Acme Factors & Co";
const PASSWORD_M = "AUTH_METHOD_TYPE_PASSWORD";
const IDP_M = "AUTH_METHOD_TYPE_IDP";
const TOTP_M = "AUTH_METHOD_TYPE_TOTP";
const EMAIL_M = "AUTH_METHOD_TYPE_OTP_EMAIL";
const SMS_M = "AUTH_METHOD_TYPE_OTP_SMS";
const RECOVERY_M = "AUTH_METHOD_TYPE_RECOVERY_CODES";

/** A failed call with this code, and over REST with this HTTP status. */
function refused(r: CallResult, code: Code, status: number): string {
  const { message } = failed(r, code);
  if (r.httpStatus !== undefined) expect(r.httpStatus, JSON.stringify(r)).toBe(status);
  return message;
}

describe.each(DATABASE_KINDS)("second factors of PlatformUsers (%s)", (kind) => {
  let server: TestServer;
  let admin: Users;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = new Users(server);
    ok(
      await protocolClient(PlatformInstances, "grpc", server.baseUrl).call(
        "PatchInstance",
        { id: server.instanceId, instance: { name: ISSUER } },
        server.adminToken,
      ),
    );
  });
  afterAll(() => server?.close());

  /** A person with a password; `email`/`phone`: whether its address (always there) and number are verified. */
  async function person(contacts: { email?: boolean; phone?: boolean } = {}, users = admin): Promise<{ id: string; username: string }> {
    const username = uniqueName("mfa");
    const extra: JsonObject = {
      password: PASSWORD,
      email: { address: `${username}@mail.example`, isVerified: contacts.email ?? false },
      ...(contacts.phone !== undefined && { phone: { number: "+41791234567", isVerified: contacts.phone } }),
    };
    return { id: await users.create(humanUser(username, extra)), username };
  }
  const methodsOf = async (id: string, users = admin): Promise<string[]> => ok(await users.call("ListAuthMethods", { id })).authMethodTypes ?? [];
  /** AddTOTP and VerifyTOTP with a code of the answered secret: the secret. */
  async function activeTotp(id: string, users = admin): Promise<string> {
    const { secret } = ok(await users.call("AddTOTP", { id }));
    ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
    return secret as string;
  }

  describe("TOTP", () => {
    it.each(PROTOCOLS)(
      "AddTOTP answers the secret and its otpauth URI; VerifyTOTP activates it with a code of it, once; RemoveTOTP removes it (%s)",
      async (protocol) => {
        const users = new Users(server, protocol);
        const { id, username } = await person({}, users);
        const added = ok(await users.call("AddTOTP", { id }));
        expect(added.details).toMatchObject({ id, sequence: "2" });
        // 160 bits, base32 without padding, as authenticators take it by hand.
        expect(added.secret).toMatch(/^[A-Z2-7]{32}$/);
        expect(added.uri).toMatch(/^otpauth:\/\/totp\//);
        const parsed = URI.parse(added.uri);
        expect(parsed).toBeInstanceOf(TOTP);
        expect(parsed).toMatchObject({ issuer: ISSUER, label: username, algorithm: "SHA1", digits: 6, period: 30 });
        expect(parsed.secret.base32).toBe(added.secret);
        // Pending: not a way of signing in yet.
        expect(await methodsOf(id, users)).toEqual([PASSWORD_M]);

        expect(refused(await users.call("VerifyTOTP", { id, verification: { code: wrongTotpCode(added.secret) } }), Code.InvalidArgument, 400)).toBe(
          "the code is not valid",
        );
        expect(await methodsOf(id, users)).toEqual([PASSWORD_M]);
        const verified = ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(added.secret) } }));
        expect(verified.details).toMatchObject({ id, sequence: "3" });
        expect(await methodsOf(id, users)).toEqual([PASSWORD_M, TOTP_M]);

        // Active: neither replaced nor verified again.
        expect(refused(await users.call("AddTOTP", { id }), Code.FailedPrecondition, 400)).toContain("remove it first");
        refused(await users.call("VerifyTOTP", { id, verification: { code: totpCode(added.secret) } }), Code.FailedPrecondition, 400);
        expect(await methodsOf(id, users)).toEqual([PASSWORD_M, TOTP_M]);

        expect(ok(await users.call("RemoveTOTP", { id })).details).toMatchObject({ id, sequence: "4" });
        refused(await users.call("RemoveTOTP", { id }), Code.NotFound, 404);
        expect(await methodsOf(id, users)).toEqual([PASSWORD_M]);
        // Removed: a new one can be set up, with a new secret.
        const again = ok(await users.call("AddTOTP", { id }));
        expect(again.secret).not.toBe(added.secret);
      },
    );

    it("AddTOTP while one is pending replaces its secret: codes of the first no longer verify", async () => {
      const { id } = await person();
      const first = ok(await admin.call("AddTOTP", { id })).secret as string;
      const second = ok(await admin.call("AddTOTP", { id })).secret as string;
      expect(second).not.toBe(first);
      failed(await admin.call("VerifyTOTP", { id, verification: { code: totpCodeOnlyOf(first, second) } }), Code.InvalidArgument);
      ok(await admin.call("VerifyTOTP", { id, verification: { code: totpCode(second) } }));
      expect(await methodsOf(id)).toEqual([PASSWORD_M, TOTP_M]);
    });

    it("VerifyTOTP without AddTOTP is FailedPrecondition; a pending authenticator can be removed", async () => {
      const { id } = await person();
      expect(failed(await admin.call("VerifyTOTP", { id, verification: { code: "123456" } }), Code.FailedPrecondition).message).toContain("add one first");
      failed(await admin.call("RemoveTOTP", { id }), Code.NotFound);
      ok(await admin.call("AddTOTP", { id }));
      ok(await admin.call("RemoveTOTP", { id }));
      failed(await admin.call("VerifyTOTP", { id, verification: { code: "123456" } }), Code.FailedPrecondition);
    });

    it("refuses codes that are not six digits, and a request without a code", async () => {
      const { id } = await person();
      const { secret } = ok(await admin.call("AddTOTP", { id }));
      for (const code of [`${totpCode(secret)}0`, totpCode(secret).slice(1), "abcdef"]) {
        expect(failed(await admin.call("VerifyTOTP", { id, verification: { code } }), Code.InvalidArgument).message, code).toBe("the code is not valid");
      }
      failed(await admin.call("VerifyTOTP", { id }), Code.InvalidArgument);
      expect(await methodsOf(id)).toEqual([PASSWORD_M]);
    });
  });

  it("a machine user has no second factors: every factor RPC is FailedPrecondition and it lists no way of signing in", async () => {
    const id = await admin.create(machineUser(uniqueName("mfasvc")));
    for (const rpc of ["AddTOTP", "RemoveTOTP", "AddOTPEmail", "RemoveOTPEmail", "AddOTPSMS", "RemoveOTPSMS", "GenerateRecoveryCodes", "RemoveRecoveryCodes"]) {
      expect(failed(await admin.call(rpc, { id }), Code.FailedPrecondition).message, rpc).toContain("machine user");
    }
    failed(await admin.call("VerifyTOTP", { id, verification: { code: "123456" } }), Code.FailedPrecondition);
    expect(await methodsOf(id)).toEqual([]);
  });

  it("unknown users are NotFound to every factor RPC", async () => {
    const id = "01a20000-0000-7000-8000-00000000beef";
    for (const rpc of [
      "AddTOTP",
      "RemoveTOTP",
      "AddOTPEmail",
      "RemoveOTPEmail",
      "AddOTPSMS",
      "RemoveOTPSMS",
      "GenerateRecoveryCodes",
      "RemoveRecoveryCodes",
      "ListAuthMethods",
    ]) {
      failed(await admin.call(rpc, { id }), Code.NotFound);
    }
    failed(await admin.call("VerifyTOTP", { id, verification: { code: "123456" } }), Code.NotFound);
  });

  describe("one-time codes by email and SMS", () => {
    it("AddOTPEmail needs a verified address: FailedPrecondition before VerifyEmail, ok after, AlreadyExists again; RemoveOTPEmail", async () => {
      const { id } = await person();
      expect(failed(await admin.call("AddOTPEmail", { id }), Code.FailedPrecondition).message).toContain("verified email");
      const { code } = ok(await admin.call("ResendEmailCode", { id, returnCode: true }));
      ok(await admin.call("VerifyEmail", { id, verification: { code } }));

      ok(await admin.call("AddOTPEmail", { id }));
      failed(await admin.call("AddOTPEmail", { id }), Code.AlreadyExists);
      expect(await methodsOf(id)).toEqual([PASSWORD_M, EMAIL_M]);
      ok(await admin.call("RemoveOTPEmail", { id }));
      failed(await admin.call("RemoveOTPEmail", { id }), Code.NotFound);
      expect(await methodsOf(id)).toEqual([PASSWORD_M]);
    });

    it("AddOTPSMS needs a verified phone number: FailedPrecondition without one or with an unverified one; AlreadyExists again; RemoveOTPSMS", async () => {
      const without = await person({ email: true });
      expect(failed(await admin.call("AddOTPSMS", { id: without.id }), Code.FailedPrecondition).message).toContain("verified phone");
      const unverified = await person({ email: true, phone: false });
      failed(await admin.call("AddOTPSMS", { id: unverified.id }), Code.FailedPrecondition);
      // A verified email address does not stand in for the phone, nor the other way round.
      const phoneOnly = await person({ phone: true });
      failed(await admin.call("AddOTPEmail", { id: phoneOnly.id }), Code.FailedPrecondition);

      ok(await admin.call("AddOTPSMS", { id: phoneOnly.id }));
      failed(await admin.call("AddOTPSMS", { id: phoneOnly.id }), Code.AlreadyExists);
      expect(await methodsOf(phoneOnly.id)).toEqual([PASSWORD_M, SMS_M]);
      ok(await admin.call("RemoveOTPSMS", { id: phoneOnly.id }));
      failed(await admin.call("RemoveOTPSMS", { id: phoneOnly.id }), Code.NotFound);
      expect(await methodsOf(phoneOnly.id)).toEqual([PASSWORD_M]);
      for (const { id } of [without, unverified]) expect(await methodsOf(id)).toEqual([PASSWORD_M]);
    });
  });

  it("GenerateRecoveryCodes answers ten distinct XXXX-XXXX-XXXX codes, a new set each time; RemoveRecoveryCodes, then NotFound", async () => {
    const { id } = await person();
    const first = ok(await admin.call("GenerateRecoveryCodes", { id })).codes as string[];
    expect(first).toHaveLength(10);
    for (const code of first) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(new Set(first).size).toBe(10);
    expect(await methodsOf(id)).toEqual([PASSWORD_M, RECOVERY_M]);

    const second = ok(await admin.call("GenerateRecoveryCodes", { id })).codes as string[];
    expect(second).toHaveLength(10);
    expect(second.filter((code) => first.includes(code))).toEqual([]);
    expect(await methodsOf(id)).toEqual([PASSWORD_M, RECOVERY_M]);

    ok(await admin.call("RemoveRecoveryCodes", { id }));
    failed(await admin.call("RemoveRecoveryCodes", { id }), Code.NotFound);
    expect(await methodsOf(id)).toEqual([PASSWORD_M]);
  });

  it("ListAuthMethods lists every kind in the documented order, password first; no answer and no event holds a secret or code", async () => {
    const { id } = await person({ email: true, phone: true });
    // Set up in another order than listed.
    const { codes } = ok(await admin.call("GenerateRecoveryCodes", { id }));
    ok(await admin.call("AddOTPSMS", { id }));
    ok(await admin.call("AddOTPEmail", { id }));
    const secret = await activeTotp(id);
    const idpId = await gitlabIdp(server.baseUrl, server.adminToken, "Factors GitLab");
    await linkAccount(server, server.instanceId, id, { idpId, externalUserId: `mfa-${id}`, username: "mfa-ext", email: "mfa-ext@mail.example" });

    const listed = ok(await admin.call("ListAuthMethods", { id }));
    expect(listed).toEqual({ authMethodTypes: [PASSWORD_M, IDP_M, TOTP_M, EMAIL_M, SMS_M, RECOVERY_M] });
    const secrets = [secret, ...(codes as string[]), ...(codes as string[]).map((c) => c.replace(/-/g, ""))];
    expectNothingSecret([listed, await admin.get(id)], secrets);

    const db = server.service.store.db;
    const events = await db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("aggregate_type", "=", "user")
      .where("aggregate_id", "=", id)
      .orderBy("sequence")
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(["user.recovery_codes.generated", "user.otp_sms.added", "user.otp_email.added", "user.totp.added", "user.totp.verified"]),
    );
    expectNothingSecret(events, secrets);
    // At rest too: the secret sealed, the codes keyed-hashed.
    expectNothingSecret(await db.selectFrom("user_factors").selectAll().where("user_id", "=", id).execute(), secrets);
    expectNothingSecret(await db.selectFrom("user_recovery_codes").selectAll().where("user_id", "=", id).execute(), secrets);
  });

  describe("people acting on themselves", () => {
    const LOGIN = PlatformLoginSettings;
    const setForceMfa = async (change: JsonObject) =>
      ok(
        await protocolClient(LOGIN, "grpc", server.baseUrl).call(
          "SetLoginSettings",
          { settings: { forceMfa: change }, ctx: { instanceId: server.instanceId } },
          server.adminToken,
        ),
      );
    /** A person and its own client (a personal access token the administrator made for it). */
    async function self(contacts: { email?: boolean; phone?: boolean } = {}) {
      const { id } = await person(contacts);
      return { id, me: admin.as((await admin.pat(id)).token) };
    }

    it("may set up TOTP and recovery codes, list and remove its own, but not another's", async () => {
      const { id, me } = await self();
      const secret = await activeTotp(id, me);
      ok(await me.call("GenerateRecoveryCodes", { id }));
      expect(await methodsOf(id, me)).toEqual([PASSWORD_M, TOTP_M, RECOVERY_M]);

      const other = await person({ email: true });
      const otherSecret = await activeTotp(other.id);
      for (const rpc of ["AddTOTP", "RemoveTOTP", "AddOTPEmail", "GenerateRecoveryCodes", "ListAuthMethods"])
        failed(await me.call(rpc, { id: other.id }), Code.PermissionDenied);
      expect(await methodsOf(other.id)).toEqual([PASSWORD_M, TOTP_M]);

      // Without forced second factors the last one may go too.
      ok(await me.call("RemoveTOTP", { id }));
      ok(await me.call("RemoveRecoveryCodes", { id }));
      expect(await methodsOf(id, me)).toEqual([PASSWORD_M]);
      expectNothingSecret(await me.get(id), [secret, otherSecret]);
    });

    it("with force_mfa may not remove its last second factor (an administrator may), but one of two, and a pending TOTP", async () => {
      const { id, me } = await self({ email: true });
      await activeTotp(id, me);
      ok(await me.call("AddOTPEmail", { id }));
      await setForceMfa({ set: true });
      try {
        ok(await me.call("RemoveOTPEmail", { id }));
        expect(failed(await me.call("RemoveTOTP", { id }), Code.FailedPrecondition).message).toContain("last");
        expect(await methodsOf(id)).toEqual([PASSWORD_M, TOTP_M]);
        ok(await admin.call("RemoveTOTP", { id }));
        expect(await methodsOf(id)).toEqual([PASSWORD_M]);

        // A pending TOTP is no factor yet: the person may drop it.
        ok(await me.call("AddTOTP", { id }));
        ok(await me.call("RemoveTOTP", { id }));
        // The rule holds for every kind of factor: the email codes are the last one now.
        ok(await me.call("AddOTPEmail", { id }));
        failed(await me.call("RemoveOTPEmail", { id }), Code.FailedPrecondition);
      } finally {
        await setForceMfa({ reset: true });
      }
      ok(await me.call("RemoveOTPEmail", { id }));
    });
  });

  it("serves the documented REST paths as a curl user calls them", async () => {
    const { id } = await person({ email: true, phone: true });
    const call = async (method: string, path: string, body?: JsonObject) => {
      const res = await fetch(`${server.baseUrl}/resources/v3alpha/users/${id}${path}`, {
        method,
        headers: { authorization: `Bearer ${server.adminToken}`, ...(body && { "content-type": "application/json" }) },
        ...(body && { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Msg };
    };
    const added = await call("POST", "/totp");
    expect(added).toMatchObject({ status: 200, json: { details: { id }, secret: expect.any(String), uri: expect.stringMatching(/^otpauth:/) } });
    expect(await call("POST", "/totp/_verify", { code: wrongTotpCode(added.json.secret) })).toMatchObject({
      status: 400,
      json: { code: Code.InvalidArgument, message: "the code is not valid" },
    });
    expect(await call("POST", "/totp/_verify", { code: totpCode(added.json.secret) })).toMatchObject({ status: 200, json: { details: { id } } });
    expect((await call("POST", "/otp_email")).status).toBe(200);
    expect((await call("POST", "/otp_sms")).status).toBe(200);
    const generated = await call("POST", "/recovery_codes/_generate");
    expect(generated.status).toBe(200);
    expect(generated.json.codes).toHaveLength(10);
    expect(await call("GET", "/auth_methods")).toEqual({ status: 200, json: { authMethodTypes: [PASSWORD_M, TOTP_M, EMAIL_M, SMS_M, RECOVERY_M] } });
    for (const path of ["/totp", "/otp_email", "/otp_sms", "/recovery_codes"]) {
      expect((await call("DELETE", path)).status, path).toBe(200);
      expect(await call("DELETE", path), path).toMatchObject({ status: 404, json: { code: Code.NotFound } });
    }
    expect(await call("GET", "/auth_methods")).toEqual({ status: 200, json: { authMethodTypes: [PASSWORD_M] } });
  });
});
