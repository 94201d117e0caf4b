import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { DEFAULT_TEXTS } from "../../src/domain/settings/message-texts/defaults.js";
import { testCertificates, TestSmtpServer, type Certificates } from "../notification-providers/fakes.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient, type Client } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { createOrg, expectNothingSecret, failed, humanUser, machineUser, ok, uniqueName, Users, type Msg } from "../users/helpers.js";
import { totpCode, wrongTotpCode } from "../users/totp.js";

/**
 * PlatformSessions, black-box: sessions created with the user and its password, grown by
 * patches with second factors (a TOTP computed here, email codes answered or mailed through a
 * real SMTP server, recovery codes), their metadata and lifetime, the token that rotates on
 * every write, the one answer for a wrong user or password, the lockout that session checks
 * share with every other check, the rate limits, and who may call what: a LOGIN_CLIENT, a
 * person on its own sessions, anyone with a session's token.
 *
 * A TOTP code is accepted once and only past the last accepted time step: a person here
 * verifies its authenticator with the code of now and uses it in a session once, with the
 * next step's code.
 */

const PASSWORD = "Sess10n-Pa55word!";
const WRONG_LOGIN = "the login name or password is not valid";
/** The codes of messages (domain/notification/codes.ts). */
const CODE = /\b[ACDEFGHJKMNPQRTUVWXY34679]{8}\b/;
const SIGN_IN_SUBJECT = DEFAULT_TEXTS.en.otp_email.subject.split("{{")[0]!;
const NO_SUCH_SESSION = "01a20000-0000-7000-8000-00000000cafe";
const b64 = (text: string) => Buffer.from(text).toString("base64");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let certificatesDir: string;
let certificates: Certificates;
beforeAll(async () => {
  certificatesDir = await mkdtemp(join(tmpdir(), "sessions-"));
  certificates = await testCertificates(certificatesDir);
});
afterAll(() => rm(certificatesDir, { recursive: true, force: true }));

/** A failed call with this code, and over REST with this HTTP status: its message. */
function refused(r: CallResult, code: Code, status: number): string {
  const { message } = failed(r, code);
  if (r.httpStatus !== undefined) expect(r.httpStatus, JSON.stringify(r)).toBe(status);
  return message;
}

/** What the fixtures of one server share: its admin's user client and a LOGIN_CLIENT's token. */
async function fixture(server: TestServer): Promise<{ users: Users; loginClient: string }> {
  const users = new Users(server);
  const id = await users.create(machineUser(uniqueName("login-ui")));
  ok(
    await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
      "CreateMembership",
      { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
      server.adminToken,
    ),
  );
  return { users, loginClient: (await users.pat(id)).token };
}

/** A person with the password PASSWORD; `email`: its address verified. Its id, login name and address. */
async function newPerson(users: Users, opts: { email?: boolean; orgId?: string } = {}) {
  const username = uniqueName("sess");
  const email = `${username}@mail.example`;
  const id = await users.create(
    humanUser(username, { password: PASSWORD, email: { address: email, isVerified: opts.email ?? false } }, { displayName: `Ada ${username}` }),
    opts.orgId ? { orgId: opts.orgId } : undefined,
  );
  const user = await users.get(id);
  return { id, username, email, loginName: user.loginName as string, displayName: `Ada ${username}` };
}

/** AddTOTP, and VerifyTOTP with the code of now: the secret. */
async function withTotp(users: Users, id: string): Promise<string> {
  const { secret } = ok(await users.call("AddTOTP", { id }));
  ok(await users.call("VerifyTOTP", { id, verification: { code: totpCode(secret) } }));
  return secret as string;
}

/** A person (newPerson) with a verified email address and email codes set up. */
async function newEmailPerson(users: Users) {
  const p = await newPerson(users, { email: true });
  ok(await users.call("AddOTPEmail", { id: p.id }));
  return p;
}

describe.each(DATABASE_KINDS)("PlatformSessions (%s)", (kind) => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let users: Users;
  let loginClient: string;

  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
    server = await startTestServer(kind, {
      PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${await smtp.start()}`,
      PLATFORM_SMTP_FROM: "noreply@platform.example",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
    });
    ({ users, loginClient } = await fixture(server));
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  /** The session API as the LOGIN_CLIENT (or the token given) calls it. */
  const sessions = (protocol: Protocol = "grpc", token = loginClient): Client => serviceClient(PlatformSessions, server.baseUrl, token, protocol);
  const person = (opts: { email?: boolean; orgId?: string } = {}) => newPerson(users, opts);
  const sessionOf = async (id: string): Promise<Msg> => (await sessions().ok("GetSession", { id })).session;
  const sessionIdsOf = async (userId: string): Promise<string[]> =>
    ((await sessions().ok("SearchSessions", { filters: [{ userId }] })).result ?? []).map((s: Msg) => s.details.id);
  /** A session of the person, its user checked (by ID) and nothing else: its id and token. */
  const userSession = async (userId: string): Promise<{ id: string; token: string }> => {
    const made = await sessions().ok("CreateSession", { checks: { user: { userId } } });
    return { id: made.sessionId, token: made.sessionToken };
  };
  const mailedCodes = (address: string) =>
    smtp.delivered
      .filter((d) => d.to.includes(address) && (d.mail.subject ?? "").startsWith(SIGN_IN_SUBJECT))
      .map((d) => CODE.exec(d.mail.text ?? "")?.[0] ?? expect.fail(`no code in ${d.mail.text}`));

  it.each(PROTOCOLS)(
    "creates a session with login name and password, reads, patches, searches and deletes it, never showing its token (%s)",
    async (protocol) => {
      const s = sessions(protocol);
      const p = await person();
      const before = Date.now();
      const made = await s.call("CreateSession", {
        checks: { user: { loginName: p.loginName }, password: { password: PASSWORD } },
        metadata: { ui: b64("v1") },
        userAgent: { fingerprintId: `fp-${protocol}` },
        lifetime: "3600s",
      });
      const created = ok(made);
      if (protocol === "rest") expect(made.httpStatus).toBe(201);
      expect(created.sessionId).toEqual(expect.any(String));
      expect(created.details).toMatchObject({ id: created.sessionId, resourceOwner: { id: server.instanceId } });
      expect(created.sessionToken).toMatch(/\S{20,}/);

      const got = await s.ok("GetSession", { id: created.sessionId });
      const session = got.session;
      expect(session.factors.user).toEqual({
        id: p.id,
        loginName: p.loginName,
        displayName: p.displayName,
        organizationId: server.defaultOrgId,
        verifiedAt: expect.any(String),
      });
      expect(session.factors.password).toEqual({ verifiedAt: expect.any(String) });
      expect(session.factors.totp).toBeUndefined();
      expect(session.metadata).toEqual({ ui: b64("v1") });
      expect(session.userAgent).toMatchObject({
        fingerprintId: `fp-${protocol}`,
        ip: expect.stringMatching(/127\.0\.0\.1$/),
        description: expect.stringMatching(/\S/),
      });
      const expires = Date.parse(session.expirationDate);
      expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);

      const patched = await s.ok("PatchSession", { id: created.sessionId, sessionToken: created.sessionToken, metadata: { step: b64("2") } });
      expect(patched.sessionToken).toMatch(/\S{20,}/);
      expect(patched.sessionToken).not.toBe(created.sessionToken);
      expect(patched.details).toMatchObject({ id: created.sessionId });
      expect(Number(patched.details.sequence)).toBeGreaterThan(Number(created.details.sequence));
      expect(
        refused(
          await s.call("PatchSession", { id: created.sessionId, sessionToken: created.sessionToken, metadata: { x: b64("y") } }),
          Code.PermissionDenied,
          403,
        ),
      ).toContain("token");

      const found = await s.ok("SearchSessions", { filters: [{ userAgentFingerprintId: `fp-${protocol}` }] });
      expect(found.result.map((r: Msg) => r.details.id)).toEqual([created.sessionId]);
      expect(found.result[0].metadata).toEqual({ ui: b64("v1"), step: b64("2") });
      expectNothingSecret([got, found], [created.sessionToken, patched.sessionToken, PASSWORD]);

      ok(await s.call("DeleteSession", { id: created.sessionId }));
      refused(await s.call("GetSession", { id: created.sessionId }), Code.NotFound, 404);
      refused(await s.call("PatchSession", { id: created.sessionId, sessionToken: patched.sessionToken }), Code.NotFound, 404);
      expect(await sessionIdsOf(p.id)).toEqual([]);
    },
  );

  it("takes the user by ID; the user agent comes from the request unless given", async () => {
    const p = await person();
    const res = await fetch(`${server.baseUrl}/resources/v3alpha/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${loginClient}`, "content-type": "application/json", "user-agent": "SessionTest/1.0 (curl-like)" },
      body: JSON.stringify({ checks: { user: { userId: p.id }, password: { password: PASSWORD } } }),
    });
    expect(res.status).toBe(201);
    const { sessionId } = (await res.json()) as Msg;
    const session = await sessionOf(sessionId);
    expect(session.factors.user).toMatchObject({ id: p.id, loginName: p.loginName });
    expect(session.factors.password.verifiedAt).toEqual(expect.any(String));
    expect(session.userAgent).toEqual({ ip: expect.stringMatching(/127\.0\.0\.1$/), description: "SessionTest/1.0 (curl-like)" });
    // Without a lifetime a session lasts until deleted.
    expect(session.expirationDate).toBeUndefined();

    const given = await sessions().ok("CreateSession", {
      checks: { user: { userId: p.id } },
      userAgent: { ip: "203.0.113.7", description: "Firefox on the kiosk" },
    });
    expect((await sessionOf(given.sessionId)).userAgent).toEqual({ ip: "203.0.113.7", description: "Firefox on the kiosk" });
  });

  it("answers a wrong password and an unknown login name alike; an unknown user without a password is NotFound; a failed create leaves no session", async () => {
    const p = await person();
    const s = sessions("rest");
    const wrongPassword = refused(
      await s.call("CreateSession", { checks: { user: { loginName: p.loginName }, password: { password: "Wrong-Pa55word!" } } }),
      Code.InvalidArgument,
      400,
    );
    const unknownName = refused(
      await s.call("CreateSession", { checks: { user: { loginName: `nobody@${p.loginName.split("@")[1]}` }, password: { password: PASSWORD } } }),
      Code.InvalidArgument,
      400,
    );
    const unknownId = refused(
      await s.call("CreateSession", { checks: { user: { userId: "01a20000-0000-7000-8000-00000000beef" }, password: { password: PASSWORD } } }),
      Code.InvalidArgument,
      400,
    );
    expect([wrongPassword, unknownName, unknownId]).toEqual([WRONG_LOGIN, WRONG_LOGIN, WRONG_LOGIN]);

    refused(await s.call("CreateSession", { checks: { user: { loginName: `nobody@${p.loginName.split("@")[1]}` } } }), Code.NotFound, 404);
    // A machine user signs in with no session: it is no user of one.
    const machine = await users.create(machineUser(uniqueName("sess-svc")));
    refused(await s.call("CreateSession", { checks: { user: { userId: machine } } }), Code.NotFound, 404);
    expect(refused(await s.call("CreateSession", { checks: { user: { userId: machine }, password: { password: PASSWORD } } }), Code.InvalidArgument, 400)).toBe(
      WRONG_LOGIN,
    );

    // The right password with a wrong second factor: nothing is created either.
    const secret = await withTotp(users, p.id);
    expect(
      refused(
        await s.call("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD }, totp: { code: wrongTotpCode(secret) } } }),
        Code.InvalidArgument,
        400,
      ),
    ).toContain("checks.totp");
    expect(await sessionIdsOf(p.id)).toEqual([]);
    expect((await users.get(p.id)).state).toBe("USER_STATE_ACTIVE");
  });

  /** A person with a TOTP, of a new organization whose login settings lock after 3 failed checks; and the TOTP's secret. */
  async function strictPersonWithTotp() {
    const org = await createOrg(server, uniqueName("Strict"));
    ok(
      await protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call(
        "SetLoginSettings",
        { settings: { maxPasswordAttempts: { set: 3 } }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const p = await person({ orgId: org.id });
    return { p, secret: await withTotp(users, p.id) };
  }

  it("counts wrong passwords and wrong codes of sessions toward one lockout (max_password_attempts 3); a locked user's checks are FailedPrecondition", async () => {
    const { p, secret } = await strictPersonWithTotp();
    const s = sessions();
    const wrong = { user: { loginName: p.loginName }, password: { password: "Wrong-Pa55word!" } };

    expect(failed(await s.call("CreateSession", { checks: wrong }), Code.InvalidArgument).message).toBe(WRONG_LOGIN);
    const open = await userSession(p.id);
    expect(
      failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code: wrongTotpCode(secret) } } }), Code.InvalidArgument)
        .message,
    ).toContain("checks.totp");
    expect((await users.get(p.id)).state).toBe("USER_STATE_ACTIVE");
    expect(failed(await s.call("CreateSession", { checks: wrong }), Code.InvalidArgument).message).toBe(WRONG_LOGIN);
    expect((await users.get(p.id)).state).toBe("USER_STATE_LOCKED");

    // Locked: the right password and the right code no longer help.
    expect(
      failed(await s.call("CreateSession", { checks: { user: { loginName: p.loginName }, password: { password: PASSWORD } } }), Code.FailedPrecondition)
        .message,
    ).toContain("locked");
    expect(
      failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code: totpCode(secret, 1) } } }), Code.FailedPrecondition)
        .message,
    ).toContain("locked");
    expect((await sessionOf(open.id)).factors.totp).toBeUndefined();
    expect(await sessionIdsOf(p.id)).toEqual([open.id]);
  });

  it("locks a person without a password after wrong codes as anyone else (issue 41: the count was kept on the password)", async () => {
    const org = await createOrg(server, uniqueName("Strict"));
    ok(
      await protocolClient(PlatformLoginSettings, "grpc", server.baseUrl).call(
        "SetLoginSettings",
        { settings: { maxPasswordAttempts: { set: 3 } }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const id = await users.create(humanUser(uniqueName("nopw")), { orgId: org.id });
    const secret = await withTotp(users, id);
    const s = sessions();
    const open = await userSession(id);
    for (let i = 0; i < 2; i++)
      failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code: wrongTotpCode(secret) } } }), Code.InvalidArgument);
    expect((await users.get(id)).state).toBe("USER_STATE_ACTIVE");
    failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code: wrongTotpCode(secret) } } }), Code.InvalidArgument);
    expect((await users.get(id)).state).toBe("USER_STATE_LOCKED");
    expect(
      failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code: totpCode(secret, 1) } } }), Code.FailedPrecondition)
        .message,
    ).toContain("locked");
  });

  it("a right TOTP beside a wrong email code is not used up: the failed check takes nothing, the code works next (issue 41 §7)", async () => {
    const p = await person();
    const secret = await withTotp(users, p.id);
    const s = sessions();
    const open = await userSession(p.id);
    const code = totpCode(secret, 1);
    expect(
      failed(
        await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code }, otpEmail: { code: "ACDEFGHJ" } } }),
        Code.InvalidArgument,
      ).message,
    ).toContain("checks.otpEmail");
    expect((await sessionOf(open.id)).factors.totp).toBeUndefined();
    const patched = await s.ok("PatchSession", { id: open.id, sessionToken: open.token, checks: { totp: { code } } });
    expect(patched.sessionToken).toBeTruthy();
    expect((await sessionOf(open.id)).factors.totp).toBeDefined();
  });

  it("a right password gives no guesses at a code back while a second factor is due (max_password_attempts 3)", async () => {
    const { p, secret } = await strictPersonWithTotp();
    const s = sessions();
    const withPassword = () => s.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD } } });
    const wrongCode = async (made: Msg) =>
      failed(
        await s.call("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { totp: { code: wrongTotpCode(secret) } } }),
        Code.InvalidArgument,
      );

    const first = await withPassword();
    await wrongCode(first);
    await wrongCode(first);
    const second = await withPassword();
    expect((await users.get(p.id)).state).toBe("USER_STATE_ACTIVE");
    await wrongCode(second);
    expect((await users.get(p.id)).state).toBe("USER_STATE_LOCKED");
  });

  describe("PatchSession", () => {
    it("adds a TOTP check with a new token: the old token is refused, the new one works; the code is not taken twice", async () => {
      const p = await person();
      const secret = await withTotp(users, p.id);
      const s = sessions();
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD } } });
      const before = await sessionOf(made.sessionId);
      const code = totpCode(secret, 1);

      const patched = await s.ok("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { totp: { code } } });
      expect(patched.sessionToken).not.toBe(made.sessionToken);
      const after = await sessionOf(made.sessionId);
      expect(after.factors).toEqual({ ...before.factors, totp: { verifiedAt: expect.any(String) } });
      expect(Date.parse(after.factors.totp.verifiedAt)).toBeGreaterThanOrEqual(Date.parse(before.factors.password.verifiedAt));

      refused(await s.call("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, metadata: { k: b64("v") } }), Code.PermissionDenied, 403);
      const again = await s.ok("PatchSession", { id: made.sessionId, sessionToken: patched.sessionToken, metadata: { k: b64("v") } });
      expect((await sessionOf(made.sessionId)).metadata).toEqual({ k: b64("v") });

      // The same code in another session of the person: a replay.
      const other = await userSession(p.id);
      expect(
        failed(await s.call("PatchSession", { id: other.id, sessionToken: other.token, checks: { totp: { code } } }), Code.InvalidArgument).message,
      ).toContain("checks.totp");
      expect((await sessionOf(other.id)).factors.totp).toBeUndefined();
      expect((await sessionOf(made.sessionId)).factors).toEqual(after.factors);
      expectNothingSecret(await sessionOf(made.sessionId), [again.sessionToken, secret, code]);
    });

    it("a wrong code changes nothing: the factors and the token stay as they were", async () => {
      const p = await person();
      const secret = await withTotp(users, p.id);
      const s = sessions("connect");
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD } }, metadata: { a: b64("1") } });
      const before = await sessionOf(made.sessionId);
      const message = failed(
        await s.call("PatchSession", {
          id: made.sessionId,
          sessionToken: made.sessionToken,
          checks: { totp: { code: wrongTotpCode(secret) } },
          metadata: { b: b64("2") },
        }),
        Code.InvalidArgument,
      ).message;
      expect(message).toContain("checks.totp");
      expect(await sessionOf(made.sessionId)).toEqual(before);
      // The token given is still the session's.
      ok(await s.call("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { totp: { code: totpCode(secret, 1) } } }));
    });

    it("checks need a user; the user cannot change; naming the same user again is fine", async () => {
      const p = await person();
      const q = await person();
      const s = sessions("grpc-web");
      expect(failed(await s.call("CreateSession", { checks: { password: { password: PASSWORD } } }), Code.InvalidArgument).message).toContain("checks.user");
      expect(failed(await s.call("CreateSession", { challenges: { otpEmail: { returnCode: true } } }), Code.InvalidArgument).message).toContain("user");
      // A session of nobody yet: metadata only, then checks without a user are refused.
      const blank = await s.ok("CreateSession", { metadata: { step: b64("start") } });
      expect((await sessionOf(blank.sessionId)).factors.user).toBeUndefined();
      failed(
        await s.call("PatchSession", { id: blank.sessionId, sessionToken: blank.sessionToken, checks: { password: { password: PASSWORD } } }),
        Code.InvalidArgument,
      );
      const named = await s.ok("PatchSession", {
        id: blank.sessionId,
        sessionToken: blank.sessionToken,
        checks: { user: { loginName: p.loginName }, password: { password: PASSWORD } },
      });
      expect((await sessionOf(blank.sessionId)).factors).toMatchObject({ user: { id: p.id }, password: { verifiedAt: expect.any(String) } });

      expect(
        failed(
          await s.call("PatchSession", { id: blank.sessionId, sessionToken: named.sessionToken, checks: { user: { userId: q.id } } }),
          Code.FailedPrecondition,
        ).message,
      ).toContain("another user");
      expect((await sessionOf(blank.sessionId)).factors.user.id).toBe(p.id);
      ok(await s.call("PatchSession", { id: blank.sessionId, sessionToken: named.sessionToken, checks: { user: { userId: p.id } } }));
    });

    it("sets and removes metadata (an empty value removes a key), at most 20 keys", async () => {
      const p = await person();
      const s = sessions();
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id } }, metadata: { a: b64("1"), b: b64("2") } });
      const patched = await s.ok("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, metadata: { a: "", c: b64("3") } });
      expect((await sessionOf(made.sessionId)).metadata).toEqual({ b: b64("2"), c: b64("3") });

      const keys = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, b64("x")]));
      // 18 more make 20: the bound; one more is refused, and changes nothing.
      const full = await s.ok("PatchSession", { id: made.sessionId, sessionToken: patched.sessionToken, metadata: keys(18, "k") });
      expect(Object.keys((await sessionOf(made.sessionId)).metadata)).toHaveLength(20);
      expect(
        failed(await s.call("PatchSession", { id: made.sessionId, sessionToken: full.sessionToken, metadata: { one: b64("too many") } }), Code.InvalidArgument)
          .message,
      ).toContain("20");
      failed(await s.call("PatchSession", { id: made.sessionId, sessionToken: full.sessionToken, metadata: keys(21, "n") }), Code.InvalidArgument);
      failed(await s.call("CreateSession", { checks: { user: { userId: p.id } }, metadata: keys(21, "n") }), Code.InvalidArgument);
      expect(Object.keys((await sessionOf(made.sessionId)).metadata)).toHaveLength(20);
      // Replacing one key by another within the bound is fine.
      ok(await s.call("PatchSession", { id: made.sessionId, sessionToken: full.sessionToken, metadata: { b: "", one: b64("fits") } }));
      expect((await sessionOf(made.sessionId)).metadata).toMatchObject({ one: b64("fits") });
    });

    it("changes the lifetime; an expired session is FailedPrecondition", async () => {
      const p = await person();
      const s = sessions();
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id } }, lifetime: "3600s" });
      const before = Date.now();
      const patched = await s.ok("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, lifetime: "60s" });
      const expires = Date.parse((await sessionOf(made.sessionId)).expirationDate);
      expect(expires).toBeGreaterThanOrEqual(before + 59_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 61_000);
      ok(await s.call("PatchSession", { id: made.sessionId, sessionToken: patched.sessionToken, lifetime: "1s" }));

      const short = await s.ok("CreateSession", { checks: { user: { userId: p.id } }, lifetime: "1s" });
      await sleep(1100);
      expect(
        failed(await s.call("PatchSession", { id: short.sessionId, sessionToken: short.sessionToken, metadata: { k: b64("v") } }), Code.FailedPrecondition)
          .message,
      ).toContain("expired");
      expect(
        failed(await s.call("PatchSession", { id: short.sessionId, sessionToken: short.sessionToken, lifetime: "3600s" }), Code.FailedPrecondition).message,
      ).toContain("expired");
      failed(await s.call("CreateSession", { checks: { user: { userId: p.id } }, lifetime: "0s" }), Code.InvalidArgument);
    });
  });

  describe("challenges and codes", () => {
    const emailPerson = () => newEmailPerson(users);

    it("otpEmail with returnCode answers a code that checks.otpEmail takes once", async () => {
      const p = await emailPerson();
      const s = sessions();
      const made = await s.ok("CreateSession", {
        checks: { user: { userId: p.id }, password: { password: PASSWORD } },
        challenges: { otpEmail: { returnCode: true } },
      });
      const code = made.challenges?.otpEmail as string;
      expect(code).toMatch(CODE);
      const patched = await s.ok("PatchSession", {
        id: made.sessionId,
        sessionToken: made.sessionToken,
        checks: { otpEmail: { code: `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}` } },
      });
      expect((await sessionOf(made.sessionId)).factors.otpEmail).toEqual({ verifiedAt: expect.any(String) });
      expect(
        failed(await s.call("PatchSession", { id: made.sessionId, sessionToken: patched.sessionToken, checks: { otpEmail: { code } } }), Code.InvalidArgument)
          .message,
      ).toContain("checks.otpEmail");

      // A code asked for in a patch, the same way.
      const other = await userSession(p.id);
      const asked = await s.ok("PatchSession", { id: other.id, sessionToken: other.token, challenges: { otpEmail: { returnCode: true } } });
      expect(asked.challenges.otpEmail).toMatch(CODE);
      ok(await s.call("PatchSession", { id: other.id, sessionToken: asked.sessionToken, checks: { otpEmail: { code: asked.challenges.otpEmail } } }));
    });

    it("otpEmail without returnCode mails the code, and answers none", async () => {
      const p = await emailPerson();
      const s = sessions("rest");
      const made = await s.ok("CreateSession", { checks: { user: { loginName: p.loginName } }, challenges: { otpEmail: {} } });
      expect(made.challenges?.otpEmail).toBeUndefined();
      const code = await until("the mailed code", () => mailedCodes(p.email)[0]);
      ok(await s.call("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { otpEmail: { code } } }));
      expect((await sessionOf(made.sessionId)).factors.otpEmail).toEqual({ verifiedAt: expect.any(String) });
    });

    it("a challenge for a user without the factor is FailedPrecondition, and creates nothing", async () => {
      const unverified = await person();
      const verifiedOnly = await person({ email: true });
      const s = sessions();
      for (const p of [unverified, verifiedOnly]) {
        failed(await s.call("CreateSession", { checks: { user: { userId: p.id } }, challenges: { otpEmail: { returnCode: true } } }), Code.FailedPrecondition);
        failed(await s.call("CreateSession", { checks: { user: { userId: p.id } }, challenges: { otpSms: { returnCode: true } } }), Code.FailedPrecondition);
        expect(await sessionIdsOf(p.id)).toEqual([]);
      }
      // No code was made that a check could take.
      const open = await userSession(verifiedOnly.id);
      failed(await s.call("PatchSession", { id: open.id, sessionToken: open.token, checks: { otpEmail: { code: "ACDEFGHJ" } } }), Code.InvalidArgument);
    });

    it("takes a recovery code once (spaces, dashes and case do not matter)", async () => {
      const p = await person();
      const { codes } = ok(await users.call("GenerateRecoveryCodes", { id: p.id })) as { codes: string[] };
      const s = sessions();
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD }, recoveryCode: { code: codes[0]! } } });
      expect((await sessionOf(made.sessionId)).factors).toMatchObject({
        password: { verifiedAt: expect.any(String) },
        recoveryCode: { verifiedAt: expect.any(String) },
      });
      const other = await userSession(p.id);
      expect(
        failed(await s.call("PatchSession", { id: other.id, sessionToken: other.token, checks: { recoveryCode: { code: codes[0]! } } }), Code.InvalidArgument)
          .message,
      ).toContain("checks.recoveryCode");
      ok(
        await s.call("PatchSession", {
          id: other.id,
          sessionToken: other.token,
          checks: { recoveryCode: { code: codes[1]!.toLowerCase().replace(/-/g, " ") } },
        }),
      );
      expect((await sessionOf(other.id)).factors.recoveryCode).toEqual({ verifiedAt: expect.any(String) });
    });
  });

  describe("authorization", () => {
    /** A person and its own token (a personal access token the administrator made for it). */
    async function personWithToken() {
      const p = await person();
      return { ...p, token: (await users.pat(p.id)).token };
    }

    it("a LOGIN_CLIENT may create, patch, get, search and delete sessions, and read users, but not change them", async () => {
      const p = await person();
      const s = sessions("grpc", loginClient);
      const made = await s.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD } } });
      const patched = await s.ok("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, metadata: { k: b64("v") } });
      expect((await s.ok("GetSession", { id: made.sessionId })).session.factors.user.id).toBe(p.id);
      expect((await s.ok("SearchSessions", { filters: [{ ids: { ids: [made.sessionId] } }] })).result).toHaveLength(1);
      ok(await s.call("DeleteSession", { id: made.sessionId }));
      failed(await s.call("GetSession", { id: made.sessionId }), Code.NotFound);
      expect(patched.sessionToken).toEqual(expect.any(String));

      const asClient = users.as(loginClient);
      expect((await asClient.get(p.id)).username).toBe(p.username);
      failed(await asClient.call("LockUser", { id: p.id }), Code.PermissionDenied);
    });

    it("a person may not create or patch sessions, but may read, search and delete its own", async () => {
      const me = await personWithToken();
      const other = await person();
      const mine = sessions("grpc", me.token);
      const own = await userSession(me.id);
      const another = await userSession(me.id);
      const theirs = await userSession(other.id);

      refused(await mine.call("CreateSession", { checks: { user: { userId: me.id }, password: { password: PASSWORD } } }), Code.PermissionDenied, 403);
      refused(await mine.call("PatchSession", { id: own.id, sessionToken: own.token, metadata: { k: b64("v") } }), Code.PermissionDenied, 403);

      expect((await mine.ok("GetSession", { id: own.id })).session.factors.user.id).toBe(me.id);
      refused(await mine.call("GetSession", { id: theirs.id }), Code.PermissionDenied, 403);
      refused(await mine.call("GetSession", { id: NO_SUCH_SESSION }), Code.PermissionDenied, 403);

      const searched = await mine.ok("SearchSessions", {});
      expect(searched.result.map((r: Msg) => r.details.id).sort()).toEqual([own.id, another.id].sort());
      expect(Number(searched.details.totalResult)).toBe(2);
      const filtered = await mine.ok("SearchSessions", { filters: [{ userId: other.id }] });
      expect(filtered.result ?? []).toEqual([]);
      expect(Number(filtered.details?.totalResult ?? 0)).toBe(0);

      refused(await mine.call("DeleteSession", { id: theirs.id }), Code.PermissionDenied, 403);
      ok(await mine.call("DeleteSession", { id: own.id }));
      expect((await sessionIdsOf(me.id)).sort()).toEqual([another.id]);
      expect(await sessionIdsOf(other.id)).toEqual([theirs.id]);
    });

    it.each(["rest", "grpc"] as const)("anyone authenticated may get and delete a session with its token, not with a wrong one (%s)", async (protocol) => {
      const stranger = await personWithToken();
      const p = await person();
      const own = await userSession(p.id);
      const s = sessions(protocol, stranger.token);

      refused(await s.call("GetSession", { id: own.id }), Code.PermissionDenied, 403);
      refused(await s.call("GetSession", { id: own.id, sessionToken: "not-the-token" }), Code.PermissionDenied, 403);
      expect((await s.ok("GetSession", { id: own.id, sessionToken: own.token })).session.factors.user.id).toBe(p.id);
      // A token proves its own session only.
      const next = await userSession(p.id);
      refused(await s.call("GetSession", { id: next.id, sessionToken: own.token }), Code.PermissionDenied, 403);
      // Without authentication the token is not enough.
      failed(await sessions(protocol, "").call("GetSession", { id: own.id, sessionToken: own.token }), Code.Unauthenticated);

      refused(await s.call("DeleteSession", { id: own.id, sessionToken: "not-the-token" }), Code.PermissionDenied, 403);
      expect(await sessionIdsOf(p.id)).toContain(own.id);
      ok(await s.call("DeleteSession", { id: own.id, sessionToken: own.token }));
      expect(await sessionIdsOf(p.id)).toEqual([next.id]);

      // A rotated token no longer proves the session.
      const patched = await sessions().ok("PatchSession", { id: next.id, sessionToken: next.token, metadata: { k: b64("v") } });
      refused(await s.call("GetSession", { id: next.id, sessionToken: next.token }), Code.PermissionDenied, 403);
      ok(await s.call("GetSession", { id: next.id, sessionToken: patched.sessionToken }));
    });

    it("reads a session with its token over REST as a query parameter", async () => {
      const stranger = await personWithToken();
      const own = await userSession((await person()).id);
      const get = (query: string) =>
        fetch(`${server.baseUrl}/resources/v3alpha/sessions/${own.id}${query}`, { headers: { authorization: `Bearer ${stranger.token}` } });
      expect((await get("")).status).toBe(403);
      expect((await get("?sessionToken=wrong")).status).toBe(403);
      const right = await get(`?sessionToken=${encodeURIComponent(own.token)}`);
      expect(right.status).toBe(200);
      expect(((await right.json()) as Msg).session.details.id).toBe(own.id);
    });
  });
});

describe.each(DATABASE_KINDS)("PlatformSessions' rate limit per user for codes sent (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let loginClient: string;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "2" });
    ({ users, loginClient } = await fixture(server));
  });
  afterAll(() => server?.close());

  it("refuses the third code challenge for one user within a minute with ResourceExhausted, and makes no session; another user goes on", async () => {
    const s = serviceClient(PlatformSessions, server.baseUrl, loginClient, "grpc");
    const challenge = (userId: string) => s.call("CreateSession", { checks: { user: { userId } }, challenges: { otpEmail: { returnCode: true } } });
    const p = await newEmailPerson(users);
    for (let i = 0; i < 2; i++) ok(await challenge(p.id));
    failed(await challenge(p.id), Code.ResourceExhausted);
    expect(((await s.ok("SearchSessions", { filters: [{ userId: p.id }] })).result ?? []).length).toBe(2);
    ok(await challenge((await newEmailPerson(users)).id));
  });

  it("charges a code once when its write runs again: in an instance with event executions a session's first write is refused once and retried", async () => {
    const s = serviceClient(PlatformSessions, server.baseUrl, loginClient, "grpc");
    const challenge = (userId: string) => s.call("CreateSession", { checks: { user: { userId } }, challenges: { otpEmail: { returnCode: true } } });
    const p = await newEmailPerson(users);
    const db = server.service.store.db;
    await sql`insert into executions (instance_id, id, created_at, change_date, sequence, condition_type, targets, includes)
      values (${server.instanceId}, 'event/session.added', now(), now(), 1, 'event', '["no-such-target"]'::jsonb, '[]'::jsonb)`.execute(db);
    try {
      for (let i = 0; i < 2; i++) ok(await challenge(p.id));
      failed(await challenge(p.id), Code.ResourceExhausted);
      // The refused attempt left nothing; the one that ran again recorded its deliveries.
      const recorded = await sql<{
        n: number;
      }>`select count(*)::int as n from action_deliveries where instance_id = ${server.instanceId} and event_type = 'session.added'`.execute(db);
      expect(recorded.rows[0]!.n).toBe(2);
    } finally {
      await sql`delete from executions where instance_id = ${server.instanceId} and id = 'event/session.added'`.execute(db);
    }
  });
});

describe.each(DATABASE_KINDS)("PlatformSessions' rate limit per session (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let loginClient: string;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_SESSION_RATE_PER_SESSION: "3" });
    ({ users, loginClient } = await fixture(server));
  });
  afterAll(() => server?.close());

  it("refuses the fourth check on one session within a minute with ResourceExhausted; other sessions and changes without checks go on", async () => {
    const p = await newPerson(users);
    const s = serviceClient(PlatformSessions, server.baseUrl, loginClient, "rest");
    const password = { password: { password: PASSWORD } };
    const made = await s.ok("CreateSession", { checks: { user: { userId: p.id }, ...password } });
    let token = made.sessionToken as string;
    for (let i = 0; i < 2; i++) token = (await s.ok("PatchSession", { id: made.sessionId, sessionToken: token, checks: password })).sessionToken;
    const before = await s.ok("GetSession", { id: made.sessionId });
    const exhausted = await s.call("PatchSession", { id: made.sessionId, sessionToken: token, checks: password });
    expect(exhausted).toMatchObject({ ok: false, code: Code.ResourceExhausted, httpStatus: 429 });
    expect(await s.ok("GetSession", { id: made.sessionId })).toEqual(before);

    // A change without checks is no check; another session of the user has its own count.
    ok(await s.call("PatchSession", { id: made.sessionId, sessionToken: token, metadata: { k: b64("v") } }));
    ok(await s.call("CreateSession", { checks: { user: { userId: p.id }, ...password } }));
  });
});
