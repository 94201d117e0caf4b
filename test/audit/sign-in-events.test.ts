import { randomUUID } from "node:crypto";
import { importPKCS8, SignJWT } from "jose";
import type { Selectable } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import type { EventTable } from "../../src/store/schema.js";
import { Browser, formWith, type Page } from "../oidc/browser.js";
import { authorize, createRp, tokensOf, type App } from "../oidc/external-helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient, type Client } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { DAY_MS, expectNothingSecret, fromNow, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { totpCode, wrongTotpCode } from "../users/totp.js";

/*
 * Sign-in events (docs/architecture.md, "Sign-in events"), black-box: attempts on the login
 * pages, through the session API and at the token endpoint, read back from the events table
 * as the audit log's search will: their type, user, organization, method, channel, reason,
 * and the client, address and user agent they came from; never a password, code or secret,
 * nor the name typed for an account that does not exist. Then the bound: a flood of failures
 * is recorded up to the burst and summed up in one `signin.suppressed` per user or address.
 *
 * Each attempt carries a user agent of its own, which finds its rows (they are written
 * behind the request: polled for).
 */

const PASSWORD = "Aud1t-Pa55word!";
const WRONG = "Wr0ng-Pa55word!";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const LOCAL = /127\.0\.0\.1$/;

type Row = Selectable<EventTable>;

/** A user agent no other attempt has: it finds this attempt's rows. */
const agent = () => `audit-test/${randomUUID()}`;

async function loginClientOf(server: TestServer, users: Users): Promise<{ token: string; id: string }> {
  const id = await users.create(machineUser(uniqueName("login-ui")));
  ok(
    await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
      "CreateMembership",
      { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
      server.adminToken,
    ),
  );
  return users.pat(id);
}

async function person(users: Users, extra: object = {}): Promise<{ id: string; loginName: string }> {
  const id = await users.create(humanUser(uniqueName("audit"), { password: PASSWORD, ...extra }));
  return { id, loginName: (await users.get(id)).loginName as string };
}

/** The sign-in rows matching `where`, in their instance's order, once there are `count` of them. */
function signIns(server: TestServer, where: Partial<Pick<Row, "editor_agent" | "aggregate_id" | "editor_ip" | "event_type">>, count: number): Promise<Row[]> {
  return until(`${count} sign-in events with ${JSON.stringify(where)}`, async () => {
    let query = server.service.store.db.selectFrom("events").selectAll().where("aggregate_type", "=", "signin");
    for (const [column, value] of Object.entries(where)) query = query.where(column as keyof Row, "=", value as string);
    const rows = await query.orderBy("instance_position").execute();
    return rows.length >= count && rows;
  });
}

/** What every sign-in row holds: one number for its sequence and its position. */
function expectNumbered(rows: Row[]) {
  for (const row of rows) expect(Number(row.sequence)).toBe(Number(row.instance_position));
}

describe.each(DATABASE_KINDS)("sign-in events (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let loginClient: { token: string; id: string };
  let rp: App;
  let sessions: Client;

  beforeAll(async () => {
    // Every attempt of these tests comes from 127.0.0.1: no bound here (the last describe has one).
    server = await startTestServer(kind, { PLATFORM_AUDIT_SIGNIN_BURST: "1000000", PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL: "20ms" });
    users = new Users(server);
    loginClient = await loginClientOf(server, users);
    sessions = serviceClient(PlatformSessions, server.baseUrl, loginClient.token);
    rp = await createRp(server);
  }, 120_000);
  afterAll(() => server?.close());

  /** The user's row as the events show it for the default organization. */
  const attemptOf = (userId: string) => ({ aggregate_id: userId, org_id: server.defaultOrgId, creator: userId });
  const anonymous = { aggregate_id: "", org_id: "", creator: "anonymous" };

  describe("on the login pages", () => {
    /** The login-name page of a new authorization request, in a browser sending `ua`. */
    async function loginPage(ua: string) {
      const b = new Browser(server.baseUrl, { "user-agent": ua });
      const request = await authorize(server, rp);
      return { b, request, page: await b.open(request.url) };
    }
    const submit = (b: Browser, page: Page, field: string, value: string) => b.submit(formWith(page.html, field), { [field]: value }, page.url);
    const fromPage = (ua: string) => ({ editor_client: `app:${rp.clientId}`, editor_ip: expect.stringMatching(LOCAL), editor_agent: ua });

    it("records a password's success with the client, the address and the user agent", async () => {
      const p = await person(users);
      const ua = agent();
      const { b, request, page } = await loginPage(ua);
      const done = await submit(b, await submit(b, page, "loginName", p.loginName), "password", PASSWORD);
      expect((await tokensOf(rp, request, done)).claims()!.sub).toBe(p.id);
      const rows = await signIns(server, { editor_agent: ua }, 1);
      expect(rows).toEqual([
        expect.objectContaining({
          event_type: "signin.succeeded",
          ...attemptOf(p.id),
          ...fromPage(ua),
          payload: { userId: p.id, orgId: server.defaultOrgId, method: "password", channel: "login", clientId: `app:${rp.clientId}` },
        }),
      ]);
      expectNumbered(rows);
      expectNothingSecret(rows, [PASSWORD]);
    });

    it("records an unknown login name without the name, a wrong password, a locked and an inactive user", async () => {
      const unknown = `nobody-${randomUUID()}@nowhere.example`;
      const ua = agent();
      const { b, page } = await loginPage(ua);
      await submit(b, page, "loginName", unknown);
      const [row] = await signIns(server, { editor_agent: ua }, 1);
      expect(row).toMatchObject({
        event_type: "signin.failed",
        ...anonymous,
        ...fromPage(ua),
        payload: { method: "login_name", channel: "login", reason: "unknown_name", clientId: `app:${rp.clientId}` },
      });
      expect(JSON.stringify(row)).not.toContain("nobody-");

      const p = await person(users);
      const wrong = agent();
      const first = await loginPage(wrong);
      await submit(first.b, await submit(first.b, first.page, "loginName", p.loginName), "password", WRONG);
      const failed = await signIns(server, { editor_agent: wrong }, 1);
      expect(failed).toEqual([
        expect.objectContaining({
          event_type: "signin.failed",
          ...attemptOf(p.id),
          payload: { userId: p.id, orgId: server.defaultOrgId, method: "password", channel: "login", reason: "wrong_password", clientId: `app:${rp.clientId}` },
        }),
      ]);
      expectNothingSecret(failed, [WRONG]);

      for (const [method, reason] of [
        ["LockUser", "locked"],
        ["DeactivateUser", "inactive"],
      ] as const) {
        const refused = await person(users);
        ok(await users.call(method, { id: refused.id }));
        const ua = agent();
        const { b, page } = await loginPage(ua);
        await submit(b, page, "loginName", refused.loginName);
        expect(await signIns(server, { editor_agent: ua }, 1)).toEqual([
          expect.objectContaining({
            event_type: "signin.failed",
            ...attemptOf(refused.id),
            ...fromPage(ua),
            payload: expect.objectContaining({ userId: refused.id, method: "login_name", reason }),
          }),
        ]);
      }
    });

    it("records a second factor's wrong code and right code after the password's success", async () => {
      const p = await person(users);
      const { secret } = ok(await users.call("AddTOTP", { id: p.id }));
      ok(await users.call("VerifyTOTP", { id: p.id, verification: { code: totpCode(secret) } }));
      const ua = agent();
      const { b, request, page } = await loginPage(ua);
      let mfa = await submit(b, await submit(b, page, "loginName", p.loginName), "password", PASSWORD);
      const wrong = wrongTotpCode(secret);
      mfa = await submit(b, mfa, "code", wrong);
      const right = totpCode(secret, 1);
      expect((await tokensOf(rp, request, await submit(b, mfa, "code", right))).claims()!.sub).toBe(p.id);
      const rows = await signIns(server, { editor_agent: ua }, 3);
      expect(rows.map((r) => [r.event_type, r.payload])).toEqual([
        ["signin.succeeded", expect.objectContaining({ method: "password" })],
        ["signin.failed", { userId: p.id, orgId: server.defaultOrgId, method: "totp", channel: "login", reason: "wrong_code", clientId: `app:${rp.clientId}` }],
        ["signin.succeeded", expect.objectContaining({ userId: p.id, method: "totp", channel: "login" })],
      ]);
      expectNothingSecret(rows, [PASSWORD, wrong, right, secret]);
    });

    it("records where a change made through the pages came from (a new password the user had to choose)", async () => {
      const p = await person(users, { passwordChangeRequired: true });
      const ua = agent();
      const { b, request, page } = await loginPage(ua);
      const asked = await submit(b, await submit(b, page, "loginName", p.loginName), "password", PASSWORD);
      const done = await b.submit(formWith(asked.html, "newPassword"), { newPassword: `${PASSWORD}2`, newPasswordConfirmation: `${PASSWORD}2` }, asked.url);
      expect((await tokensOf(rp, request, done)).claims()!.sub).toBe(p.id);
      const changed = await server.service.store.db
        .selectFrom("events")
        .selectAll()
        .where("aggregate_type", "=", "user")
        .where("aggregate_id", "=", p.id)
        .where("event_type", "=", "user.password.changed")
        .orderBy("sequence", "desc")
        .executeTakeFirstOrThrow();
      expect(changed).toMatchObject({ creator: p.id, ...fromPage(ua) });
    });
  });

  describe("through the session API", () => {
    const fromLoginUi = (ip: unknown, ua: string) => ({ editor_client: `pat:${loginClient.id}`, editor_ip: ip, editor_agent: ua });
    /** The person's address and user agent as a login UI passes them on. */
    const forwarded = (ua: string) => ({ ip: "203.0.113.20", description: ua });

    it("records a password's success with the login UI's client and, without one given, the caller's address and user agent", async () => {
      const p = await person(users);
      const ua = agent();
      const res = await fetch(`${server.baseUrl}/resources/v3alpha/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${loginClient.token}`, "content-type": "application/json", "user-agent": ua },
        body: JSON.stringify({ checks: { user: { loginName: p.loginName }, password: { password: PASSWORD } } }),
      });
      expect(res.status).toBe(201);
      const rows = await signIns(server, { editor_agent: ua }, 1);
      expect(rows).toEqual([
        expect.objectContaining({
          event_type: "signin.succeeded",
          ...attemptOf(p.id),
          ...fromLoginUi(expect.stringMatching(LOCAL), ua),
          payload: { userId: p.id, orgId: server.defaultOrgId, method: "password", channel: "session", clientId: `pat:${loginClient.id}` },
        }),
      ]);
      expectNumbered(rows);
    });

    it("records an unknown login name without the name, a wrong password, a locked and an inactive user, from the address the login UI gave", async () => {
      const unknown = `nobody-${randomUUID()}`;
      const ua = agent();
      await sessions.call("CreateSession", { checks: { user: { loginName: unknown }, password: { password: PASSWORD } }, userAgent: forwarded(ua) });
      const [row] = await signIns(server, { editor_agent: ua }, 1);
      expect(row).toMatchObject({
        event_type: "signin.failed",
        ...anonymous,
        ...fromLoginUi("203.0.113.20", ua),
        payload: { method: "password", channel: "session", reason: "unknown_name", clientId: `pat:${loginClient.id}` },
      });
      expect(JSON.stringify(row)).not.toContain(unknown);

      const p = await person(users);
      const wrong = agent();
      await sessions.call("CreateSession", { checks: { user: { userId: p.id }, password: { password: WRONG } }, userAgent: forwarded(wrong) });
      const failed = await signIns(server, { editor_agent: wrong }, 1);
      expect(failed).toEqual([
        expect.objectContaining({ ...attemptOf(p.id), payload: expect.objectContaining({ method: "password", channel: "session", reason: "wrong_password" }) }),
      ]);
      expectNothingSecret(failed, [WRONG]);

      for (const [method, reason] of [
        ["LockUser", "locked"],
        ["DeactivateUser", "inactive"],
      ] as const) {
        const refused = await person(users);
        ok(await users.call(method, { id: refused.id }));
        const ua = agent();
        await sessions.call("CreateSession", {
          checks: { user: { loginName: refused.loginName }, password: { password: PASSWORD } },
          userAgent: forwarded(ua),
        });
        expect(await signIns(server, { editor_agent: ua }, 1)).toEqual([
          expect.objectContaining({ event_type: "signin.failed", ...attemptOf(refused.id), payload: expect.objectContaining({ method: "password", reason }) }),
        ]);
      }
    });

    it("records a TOTP's wrong code and right code in a patch of the session", async () => {
      const p = await person(users);
      const { secret } = ok(await users.call("AddTOTP", { id: p.id }));
      ok(await users.call("VerifyTOTP", { id: p.id, verification: { code: totpCode(secret) } }));
      const ua = agent();
      const made = await sessions.ok("CreateSession", { checks: { user: { userId: p.id }, password: { password: PASSWORD } }, userAgent: forwarded(ua) });
      const wrong = wrongTotpCode(secret);
      await sessions.call("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { totp: { code: wrong } } });
      const right = totpCode(secret, 1);
      await sessions.ok("PatchSession", { id: made.sessionId, sessionToken: made.sessionToken, checks: { totp: { code: right } } });
      const rows = await signIns(server, { editor_agent: ua }, 3);
      expect(rows.map((r) => [r.event_type, r.payload])).toEqual([
        ["signin.succeeded", expect.objectContaining({ method: "password", channel: "session" })],
        [
          "signin.failed",
          { userId: p.id, orgId: server.defaultOrgId, method: "totp", channel: "session", reason: "wrong_code", clientId: `pat:${loginClient.id}` },
        ],
        ["signin.succeeded", expect.objectContaining({ userId: p.id, method: "totp", channel: "session" })],
      ]);
      // The patches came through the same login UI, for the address and user agent the session was created with.
      expect(rows.every((r) => r.editor_ip === "203.0.113.20")).toBe(true);
      expectNothingSecret(rows, [PASSWORD, wrong, right, secret]);
    });
  });

  describe("at the token endpoint", () => {
    const token = (form: Record<string, string>, ua: string, headers: Record<string, string> = {}) =>
      fetch(`${server.baseUrl}/oauth/v2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": ua, ...headers },
        body: new URLSearchParams(form).toString(),
      });
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
    const credentials = (username: string, secret: string, ua: string) =>
      token({ grant_type: "client_credentials" }, ua, { authorization: basic(username, secret) });

    async function machineWithSecret() {
      const username = uniqueName("svc");
      const id = await users.create(machineUser(username));
      return { id, username, secret: ok(await users.call("GenerateSecret", { id })).clientSecret as string };
    }

    it("records a machine user's client secret: right, wrong, for an unknown name (without it), locked and inactive", async () => {
      const m = await machineWithSecret();
      const ua = agent();
      expect((await credentials(m.username, m.secret, ua)).status).toBe(200);
      expect((await credentials(m.username, `${m.secret}x`, ua)).status).toBe(401);
      const rows = await signIns(server, { editor_agent: ua }, 2);
      const fromMachine = { ...attemptOf(m.id), editor_client: `app:${m.username}`, editor_ip: expect.stringMatching(LOCAL), editor_agent: ua };
      expect(rows).toEqual([
        expect.objectContaining({
          event_type: "signin.succeeded",
          ...fromMachine,
          payload: { userId: m.id, orgId: server.defaultOrgId, method: "client_secret", channel: "token", clientId: `app:${m.username}` },
        }),
        expect.objectContaining({
          event_type: "signin.failed",
          ...fromMachine,
          payload: {
            userId: m.id,
            orgId: server.defaultOrgId,
            method: "client_secret",
            channel: "token",
            reason: "wrong_secret",
            clientId: `app:${m.username}`,
          },
        }),
      ]);
      expectNumbered(rows);
      expectNothingSecret(rows, [m.secret]);

      const unknown = `nobody-${randomUUID()}`;
      const nobody = agent();
      expect((await token({ grant_type: "client_credentials", client_id: unknown, client_secret: m.secret }, nobody)).status).toBe(401);
      const [row] = await signIns(server, { editor_agent: nobody }, 1);
      expect(row).toMatchObject({
        event_type: "signin.failed",
        ...anonymous,
        editor_client: null,
        payload: { method: "client_secret", channel: "token", reason: "unknown_name" },
      });
      expect(JSON.stringify(row)).not.toContain(unknown);

      for (const [method, reason] of [
        ["LockUser", "locked"],
        ["DeactivateUser", "inactive"],
      ] as const) {
        const refused = await machineWithSecret();
        ok(await users.call(method, { id: refused.id }));
        const ua = agent();
        expect((await credentials(refused.username, refused.secret, ua)).status).toBe(401);
        expect(await signIns(server, { editor_agent: ua }, 1)).toEqual([
          expect.objectContaining({
            event_type: "signin.failed",
            ...attemptOf(refused.id),
            editor_client: `app:${refused.username}`,
            payload: expect.objectContaining({ method: "client_secret", channel: "token", reason }),
          }),
        ]);
      }
    });

    it("records a machine user's signed assertion (jwt-bearer): valid, and signed for another audience", async () => {
      const id = await users.create(machineUser(uniqueName("jwt")));
      const keyFile = JSON.parse(
        ok(await users.call("AddKey", { id, key: { generate: "KEY_TYPE_RSA", expirationDate: fromNow(DAY_MS) } })).keyFile as string,
      ) as { keyId: string; key: string };
      const key = await importPKCS8(keyFile.key, "RS256");
      const assertion = (aud: string) =>
        new SignJWT({ jti: randomUUID() })
          .setProtectedHeader({ alg: "RS256", kid: keyFile.keyId })
          .setIssuer(id)
          .setSubject(id)
          .setAudience(aud)
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(key);
      const ua = agent();
      expect((await token({ grant_type: JWT_BEARER, assertion: await assertion(server.baseUrl) }, ua)).status).toBe(200);
      expect((await token({ grant_type: JWT_BEARER, assertion: await assertion("https://elsewhere.example") }, ua)).status).toBe(400);
      const rows = await signIns(server, { editor_agent: ua }, 2);
      expect(rows.map((r) => [r.event_type, r.editor_client, r.payload])).toEqual([
        ["signin.succeeded", `app:${id}`, { userId: id, orgId: server.defaultOrgId, method: "jwt_bearer", channel: "token", clientId: `app:${id}` }],
        [
          "signin.failed",
          `app:${id}`,
          { userId: id, orgId: server.defaultOrgId, method: "jwt_bearer", channel: "token", reason: "invalid_key", clientId: `app:${id}` },
        ],
      ]);
    });
  });
});

describe.each(DATABASE_KINDS)("the bound on sign-in events (%s)", (kind) => {
  const BURST = 3;
  let server: TestServer;
  let users: Users;
  let sessions: Client;

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_AUDIT_SIGNIN_BURST: String(BURST),
      PLATFORM_AUDIT_SIGNIN_WINDOW: "2s",
      PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL: "50ms",
    });
    users = new Users(server);
    sessions = serviceClient(PlatformSessions, server.baseUrl, (await loginClientOf(server, users)).token);
  }, 120_000);
  afterAll(() => server?.close());

  it("records a flood of wrong passwords at one user up to the burst, and the rest as one summary when the window ends", async () => {
    const p = await person(users);
    const flood = 8;
    const started = Date.now();
    // From as many addresses as attempts: only the user's key bounds them.
    for (let i = 0; i < flood; i++) {
      await sessions.call("CreateSession", { checks: { user: { userId: p.id }, password: { password: WRONG } }, userAgent: { ip: `203.0.113.${i + 1}` } });
    }
    const rows = await signIns(server, { aggregate_id: p.id }, BURST + 1);
    expect(rows.map((r) => r.event_type)).toEqual([...Array(BURST).fill("signin.failed"), "signin.suppressed"]);
    const summary = rows.at(-1)!;
    expect(summary).toMatchObject({
      aggregate_id: p.id,
      org_id: server.defaultOrgId,
      creator: p.id,
      editor_ip: null,
      payload: { userId: p.id, count: flood - BURST, reasons: { wrong_password: flood - BURST } },
    });
    const { from, to } = summary.payload as { from: string; to: string };
    expect(Date.parse(from)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(to)).toBeGreaterThanOrEqual(Date.parse(from));
    expectNumbered(rows);
    expectNothingSecret(rows, [WRONG]);
  });

  it("records a flood of unknown names from one address up to the burst, and the rest as one summary naming the address only", async () => {
    const address = "198.51.100.7";
    const names = Array.from({ length: 6 }, () => `nobody-${randomUUID()}`);
    for (const loginName of names)
      await sessions.call("CreateSession", { checks: { user: { loginName }, password: { password: WRONG } }, userAgent: { ip: address } });
    const rows = await signIns(server, { editor_ip: address }, BURST + 1);
    expect(rows.map((r) => r.event_type)).toEqual([...Array(BURST).fill("signin.failed"), "signin.suppressed"]);
    expect(rows.at(-1)).toMatchObject({
      aggregate_id: "",
      org_id: "",
      creator: "anonymous",
      payload: { address, count: names.length - BURST, reasons: { unknown_name: names.length - BURST } },
    });
    const dump = JSON.stringify(rows);
    for (const name of names) expect(dump).not.toContain(name);
  });
});
