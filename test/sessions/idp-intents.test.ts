import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformAuthRequests } from "../../gen/platform/resources/oidc/v3alpha/auth_request_service_pb.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { idpClient } from "../idps/helpers.js";
import { createRp, tokensOf, type App } from "../oidc/external-helpers.js";
import { startFakeGitHub, type FakeGitHub, type GitHubAccount } from "../oidc/fake-github.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { linkAccount } from "../users/idp-links.js";
import { totpCode } from "../users/totp.js";
import { authorizeAtLoginUi } from "./login-ui-flow.js";
import { createOrg, failed, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * External logins for login UIs of their own (PlatformIDPIntents, src/oidc/login/external/
 * intents.ts) and the session check that uses them (`checks.idpIntent`), black-box: the
 * intent is started through the API, the browser goes to a fake GitHub (fake-github.ts) and
 * back through the service's one callback to the login UI's success or failure URL, the UI
 * reads what GitHub said or signs the person in with a session, and finishes an
 * authorization request of a relying party with it: the ID token's amr and acr.
 */

const UI = "https://login.example/ui";
const SUCCESS = "https://login.example/ui/idp/success?step=1";
const FAILURE = "https://login.example/ui/idp/failure";
const PASSWORD = "Int3nt-Pa55word!";
const ACR_SFA = "urn:platform:acr:sfa";
const ACR_MFA = "urn:platform:acr:mfa";
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

let githubIds = 9000;

describe.each(DATABASE_KINDS)("identity provider intents (%s)", (kind) => {
  let github: FakeGitHub;
  let server: TestServer;
  let users: Users;
  let rp: App;
  let idpId: string;
  /** The token of the login UI's server: a machine user with the instance role LOGIN_CLIENT. */
  let ui: string;
  const base = () => server.baseUrl;
  const intents = (protocol: (typeof PROTOCOLS)[number] = "grpc") => protocolClient(PlatformIDPIntents, protocol, base());
  const sessions = () => protocolClient(PlatformSessions, "grpc", base());
  const loginSettings = (settings: JsonObject, orgId: string) =>
    protocolClient(PlatformLoginSettings, "grpc", base()).call("SetLoginSettings", { settings, ctx: { orgId } }, server.adminToken);

  beforeAll(async () => {
    github = await startFakeGitHub();
    server = await startTestServer(kind, {
      ...github.env,
      PLATFORM_OIDC_LOGIN_UI_URL: UI,
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000",
      PLATFORM_SESSION_RATE_PER_SESSION: "5",
    });
    users = new Users(server);
    rp = await createRp(server);
    const made = await idpClient(base(), server.adminToken).ok("CreateGitHubIDP", {
      idp: { idp: { name: "GitHub" }, config: { clientId: github.clientId, clientSecret: github.clientSecret } },
    });
    idpId = made.details.id as string;
    const id = await users.create(machineUser(uniqueName("login-ui")));
    ok(
      await protocolClient(PlatformMemberships, "grpc", base()).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
        server.adminToken,
      ),
    );
    ui = (await users.pat(id)).token;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await github?.close();
  });

  /** A GitHub account with a verified primary address. */
  function account(login = uniqueName("octo")): GitHubAccount {
    return {
      profile: { id: ++githubIds, login, name: "Octo Cat", email: null },
      emails: [{ email: `${login}@mail.example`, primary: true, verified: true, visibility: "private" }],
    };
  }

  /** A person with a password, linked to a GitHub account (as an external login links one). */
  async function linkedPerson(orgId?: string) {
    const who = account();
    const userId = await users.create(humanUser(uniqueName("intent"), { password: PASSWORD }), orgId ? { orgId } : undefined);
    await linkAccount(server, server.instanceId, userId, { idpId, externalUserId: String(who.profile.id), username: who.profile.login, email: "" });
    return { userId, who };
  }

  const start = (request: JsonObject = {}) => intents().call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE, ...request }, ui);

  /** The browser's way from the answered authUrl: GitHub (signed in as `who`), the service's callback; where the callback sends it. */
  async function viaGitHub(authUrl: string, who: GitHubAccount): Promise<URL> {
    github.account = who;
    const atGitHub = await fetch(authUrl, { redirect: "manual" });
    expect(atGitHub.status).toBe(302);
    return callback(atGitHub.headers.get("location")!);
  }

  async function callback(url: string): Promise<URL> {
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get("cache-control")).toBe("no-store");
    return new URL(res.headers.get("location")!);
  }

  /** An intent started and finished at GitHub as `who`: the success URL's id, token and user. */
  async function succeeded(who: GitHubAccount) {
    const started = ok(await start());
    const back = await viaGitHub(started.authUrl, who);
    expect(back.origin + back.pathname).toBe("https://login.example/ui/idp/success");
    return { id: back.searchParams.get("id")!, token: back.searchParams.get("token")!, user: back.searchParams.get("user"), back };
  }

  const createSession = (checks: JsonObject) => sessions().call("CreateSession", { checks }, ui);
  const byIntent = (intent: { id: string; token: string }) => ({ idpIntent: { idpIntentId: intent.id, idpIntentToken: intent.token } });

  /** An authorization request of the relying party, sent to the login UI. */
  const authorize = (params: Record<string, string> = {}) => authorizeAtLoginUi(base(), rp, params);
  type Flow = Awaited<ReturnType<typeof authorize>>;
  const finalize = (flow: Flow, s: { id: string; token: string }) =>
    protocolClient(PlatformAuthRequests, "grpc", base()).call("FinalizeAuthRequest", { id: flow.id, sessionId: s.id, sessionToken: s.token }, ui);
  async function finish(flow: Flow, s: { id: string; token: string }) {
    const { callbackUrl } = ok(await finalize(flow, s));
    return (await tokensOf(rp, flow, await flow.browser.open(callbackUrl))).claims()!;
  }

  describe("StartIDPIntent", () => {
    it("answers the provider's authorization URL with a state, PKCE and the service's callback, over every protocol (REST: 201)", async () => {
      for (const protocol of PROTOCOLS) {
        const r = await intents(protocol).call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE }, ui);
        const started = ok(r);
        if (protocol === "rest") expect(r.httpStatus).toBe(201);
        expect(started.idpIntentId, protocol).toBe(started.details.id);
        expect(started.details.resourceOwner).toEqual({ type: "OWNER_TYPE_INSTANCE", id: server.instanceId });
        const url = new URL(started.authUrl);
        expect(url.origin + url.pathname, protocol).toBe(`${github.url}/login/oauth/authorize`);
        expect(Object.fromEntries(url.searchParams)).toMatchObject({
          response_type: "code",
          client_id: github.clientId,
          redirect_uri: `${base()}/ui/login/idp/callback`,
          code_challenge_method: "S256",
          scope: "read:user user:email",
        });
        expect(url.searchParams.get("state")).toMatch(/^[\w-]{43}$/);
      }
    });

    it("refuses success and failure URLs that are not absolute https URLs (http only on localhost) without a fragment: InvalidArgument", async () => {
      for (const bad of ["http://login.example/ok", "/relative", "javascript:alert(1)", "https://login.example/ok#frag", ""]) {
        failed(await start({ successUrl: bad }), Code.InvalidArgument);
        failed(await start({ failureUrl: bad }), Code.InvalidArgument);
      }
      ok(await start({ successUrl: "http://localhost:3000/ok", failureUrl: "http://127.0.0.1:3000/failed" }));
    });

    it("finds only a provider active in the organization whose login settings allow external login: NotFound otherwise", async () => {
      expect(failed(await start({ idpId: "01a20000-0000-7000-8000-0000000000aa" }), Code.NotFound).message).toContain("identity provider");
      const org = await createOrg(server, uniqueName("intent-org"));
      ok(await intents().call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE, ctx: { orgId: org.id } }, ui));
      ok(await loginSettings({ allowExternalIdp: { set: false } }, org.id));
      failed(await intents().call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE, ctx: { orgId: org.id } }, ui), Code.NotFound);
    });

    it("needs session.write: a person without it is PermissionDenied, no token Unauthenticated", async () => {
      const plain = await users.create(humanUser(uniqueName("plain"), { password: PASSWORD }));
      const token = (await users.pat(plain)).token;
      failed(await intents().call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE }, token), Code.PermissionDenied);
      failed(await intents().call("StartIDPIntent", { idpId, successUrl: SUCCESS, failureUrl: FAILURE }), Code.Unauthenticated);
    });
  });

  describe("the callback", () => {
    it("sends the browser to the success URL with the intent's id, a token and the linked user; RetrieveIDPIntent shows what GitHub said, over every protocol", async () => {
      const { userId, who } = await linkedPerson();
      const intent = await succeeded(who);
      expect(intent.back.searchParams.get("step"), "the success URL's own query stays").toBe("1");
      expect(intent.token).toMatch(/^[\w-]{43}$/);
      expect(intent.user).toBe(userId);
      for (const protocol of PROTOCOLS) {
        const retrieved = ok(await intents(protocol).call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: intent.token }, ui));
        expect(retrieved, protocol).toMatchObject({
          details: { id: intent.id, resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: server.instanceId } },
          userId,
          idpInformation: {
            idpId,
            externalUserId: String(who.profile.id),
            externalUserName: who.profile.login,
            email: `${who.profile.login}@mail.example`,
            emailVerified: true,
            givenName: "Octo",
            familyName: "Cat",
            displayName: "Octo Cat",
            rawInformation: {
              id: who.profile.id,
              login: who.profile.login,
              name: "Octo Cat",
              email: `${who.profile.login}@mail.example`,
              email_verified: true,
            },
          },
        });
        expect(Date.parse(retrieved.expirationDate) - Date.now()).toBeGreaterThan(9 * 60_000);
      }
      failed(await intents().call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: "not-the-token" }, ui), Code.PermissionDenied);
      failed(await intents().call("RetrieveIDPIntent", { id: "01a20000-0000-7000-8000-0000000000ab", idpIntentToken: intent.token }, ui), Code.NotFound);
      // The token is no permission: a caller without session.read is refused with it.
      const plain = (await users.pat(await users.create(humanUser(uniqueName("plain"), { password: PASSWORD })))).token;
      failed(await intents().call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: intent.token }, plain), Code.PermissionDenied);
    });

    it("for an account linked to nobody: no user in the success URL; a UI registers one, links it, and the intent signs it in", async () => {
      const who = account();
      const intent = await succeeded(who);
      expect(intent.user).toBeNull();
      const retrieved = ok(await intents().call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: intent.token }, ui));
      expect(retrieved.userId ?? "").toBe("");
      expect(failed(await createSession(byIntent(intent)), Code.FailedPrecondition).message).toContain("linked to no user");
      const info = retrieved.idpInformation;
      const userId = await users.create(
        humanUser(
          info.externalUserName,
          { email: { address: info.email, isVerified: info.emailVerified } },
          { givenName: info.givenName, familyName: info.familyName },
        ),
      );
      await linkAccount(server, server.instanceId, userId, { idpId, externalUserId: info.externalUserId, username: info.externalUserName, email: info.email });
      const made = ok(await createSession(byIntent(intent)));
      expect(ok(await sessions().call("GetSession", { id: made.sessionId }, ui)).session.factors.user.id).toBe(userId);
    });

    it("sends the browser to the failure URL with the id and the error when GitHub answers one, or its code is no good; the intent cannot be used", async () => {
      const started = ok(await start());
      const state = new URL(started.authUrl).searchParams.get("state")!;
      const denied = await callback(`${base()}/ui/login/idp/callback?state=${state}&error=access_denied&error_description=no`);
      expect(denied.origin + denied.pathname).toBe(FAILURE);
      expect(Object.fromEntries(denied.searchParams)).toEqual({
        id: started.idpIntentId,
        error: "access_denied",
        error_description: "the identity provider answered an error",
      });
      // The state was used: a second return finds nothing.
      const again = await fetch(`${base()}/ui/login/idp/callback?state=${state}&code=whatever`, { redirect: "manual" });
      expect(again.status).toBe(400);

      const other = ok(await start());
      const badCode = await callback(`${base()}/ui/login/idp/callback?state=${new URL(other.authUrl).searchParams.get("state")}&code=never-issued`);
      expect(Object.fromEntries(badCode.searchParams)).toMatchObject({ id: other.idpIntentId, error: "idp_invalid_answer" });
      const session = await createSession({ idpIntent: { idpIntentId: other.idpIntentId, idpIntentToken: "anything" } });
      expect(failed(session, Code.InvalidArgument).message).toContain("checks.idpIntent");
    });

    it("an expired intent: its callback is an error page, its token no longer retrieves nor signs in", async () => {
      const { who } = await linkedPerson();
      const started = ok(await start());
      await expire(started.idpIntentId);
      github.account = who;
      const atGitHub = await fetch(started.authUrl, { redirect: "manual" });
      const page = await fetch(atGitHub.headers.get("location")!, { redirect: "manual" });
      expect(page.status).toBe(400);

      const intent = await succeeded(who);
      await expire(intent.id);
      expect(failed(await intents().call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: intent.token }, ui), Code.FailedPrecondition).message).toContain(
        "expired",
      );
      expect(failed(await createSession(byIntent(intent)), Code.FailedPrecondition).message).toContain("expired");
    });
  });

  /** Ends an intent's time (PLATFORM_IDP_INTENT_TTL is ten minutes here). */
  async function expire(id: string) {
    await server.service.store.db
      .updateTable("idp_intents")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", id)
      .execute();
  }

  describe("the session check checks.idpIntent", () => {
    it("the whole flow: intent, GitHub, success URL, CreateSession naming no user, FinalizeAuthRequest: amr [fed], acr sfa, auth_time the check", async () => {
      const { userId, who } = await linkedPerson();
      const flow = await authorize({ max_age: "600" });
      const intent = await succeeded(who);
      const made = ok(await createSession(byIntent(intent)));
      const { session } = ok(await sessions().call("GetSession", { id: made.sessionId }, ui));
      expect(session.factors).toMatchObject({ user: { id: userId }, idpIntent: { idpId, verifiedAt: expect.any(String) } });
      expect(session.factors.password).toBeUndefined();
      const claims = await finish(flow, { id: made.sessionId, token: made.sessionToken });
      expect(claims).toMatchObject({ sub: userId, amr: ["fed"], acr: ACR_SFA, auth_time: seconds(session.factors.idpIntent.verifiedAt) });
    });

    it("is used once: a second session, RetrieveIDPIntent and a PatchSession with it are FailedPrecondition", async () => {
      const { userId, who } = await linkedPerson();
      const intent = await succeeded(who);
      ok(await createSession(byIntent(intent)));
      expect(failed(await createSession(byIntent(intent)), Code.FailedPrecondition).message).toContain("used already");
      failed(await intents().call("RetrieveIDPIntent", { id: intent.id, idpIntentToken: intent.token }, ui), Code.FailedPrecondition);
      const other = ok(await createSession({ user: { userId } }));
      failed(
        await sessions().call("PatchSession", { id: other.sessionId, sessionToken: other.sessionToken, checks: byIntent(intent) }, ui),
        Code.FailedPrecondition,
      );
    });

    it("with the session's user; refused for another user's session, or a user named beside it who is not the linked one", async () => {
      const { userId, who } = await linkedPerson();
      const stranger = await linkedPerson();
      const intent = await succeeded(who);
      const foreign = ok(await createSession({ user: { userId: stranger.userId } }));
      const patch = (s: { sessionId: string; sessionToken: string }, checks: JsonObject) =>
        sessions().call("PatchSession", { id: s.sessionId, sessionToken: s.sessionToken, checks }, ui);
      expect(failed(await patch(foreign, byIntent(intent)), Code.FailedPrecondition).message).toContain("another user");
      expect(failed(await createSession({ user: { userId: stranger.userId }, ...byIntent(intent) }), Code.FailedPrecondition).message).toContain(
        "another user",
      );
      // Refused without being used: the right user's session takes it, beside a password.
      const own = ok(await createSession({ user: { userId }, password: { password: PASSWORD } }));
      const patched = ok(await patch(own, byIntent(intent)));
      const { session } = ok(await sessions().call("GetSession", { id: own.sessionId, sessionToken: patched.sessionToken }, ui));
      expect(Object.keys(session.factors).sort()).toEqual(["idpIntent", "password", "user"]);
    });

    it("a wrong token counts toward the session user's lockout; without a user against nobody, within the session's rate limit", async () => {
      const org = await createOrg(server, uniqueName("intent-lock"));
      ok(await loginSettings({ maxPasswordAttempts: { set: 2 } }, org.id));
      const { userId, who } = await linkedPerson(org.id);
      const intent = await succeeded(who);
      const wrong = { idpIntent: { idpIntentId: intent.id, idpIntentToken: "wrong-token" } };
      const s = ok(await createSession({ user: { userId } }));
      expect(
        failed(await sessions().call("PatchSession", { id: s.sessionId, sessionToken: s.sessionToken, checks: wrong }, ui), Code.InvalidArgument).message,
      ).toBe("checks.idpIntent: the intent or its token is not valid");
      expect((await users.get(userId)).state).toBe("USER_STATE_ACTIVE");
      failed(await sessions().call("PatchSession", { id: s.sessionId, sessionToken: s.sessionToken, checks: wrong }, ui), Code.InvalidArgument);
      expect((await users.get(userId)).state, "two wrong checks with max_password_attempts 2").toBe("USER_STATE_LOCKED");
      ok(await users.call("UnlockUser", { id: userId }));

      // A session without a user: anyone can name any intent, so a guess locks nobody.
      const blank = ok(await createSession({}));
      const attempts: CallResult[] = [];
      for (let i = 0; i < 6; i++)
        attempts.push(await sessions().call("PatchSession", { id: blank.sessionId, sessionToken: blank.sessionToken, checks: wrong }, ui));
      expect(attempts.slice(0, 5).map((r) => (r.ok ? "ok" : Code[r.code]))).toEqual(Array(5).fill("InvalidArgument"));
      expect(failed(attempts[5]!, Code.ResourceExhausted).message).toContain("session");
      expect((await users.get(userId)).state).toBe("USER_STATE_ACTIVE");
      // The intent was never used: its own token still signs in.
      ok(await createSession(byIntent(intent)));
    });

    it("an intent of another instance is unknown there: InvalidArgument, and NotFound to RetrieveIDPIntent", async () => {
      const { who } = await linkedPerson();
      const intent = await succeeded(who);
      const other = await server.createInstance("127.0.0.1");
      const there = protocolClient(PlatformSessions, "grpc", other.baseUrl);
      expect(failed(await there.call("CreateSession", { checks: byIntent(intent) }, other.adminToken), Code.InvalidArgument).message).toContain(
        "checks.idpIntent",
      );
      failed(
        await protocolClient(PlatformIDPIntents, "grpc", other.baseUrl).call(
          "RetrieveIDPIntent",
          { id: intent.id, idpIntentToken: intent.token },
          other.adminToken,
        ),
        Code.NotFound,
      );
      ok(await createSession(byIntent(intent)));
    });
  });

  describe("finalizing with an external login", () => {
    it("force_mfa asks a second factor after it, its set-up waived by force_mfa_local_only only for people without one; then amr [fed, otp, mfa] and acr mfa", async () => {
      const org = await createOrg(server, uniqueName("intent-mfa"));
      ok(await loginSettings({ forceMfa: { set: true }, forceMfaLocalOnly: { set: true } }, org.id));
      const none = await linkedPerson(org.id);
      const waived = await authorize();
      const plain = ok(await createSession(byIntent(await succeeded(none.who))));
      expect(await finish(waived, { id: plain.sessionId, token: plain.sessionToken })).toMatchObject({ sub: none.userId, amr: ["fed"], acr: ACR_SFA });

      const { userId, who } = await linkedPerson(org.id);
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const local = await authorize();
      const first = ok(await createSession(byIntent(await succeeded(who))));
      expect(failed(await finalize(local, { id: first.sessionId, token: first.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");

      ok(await loginSettings({ forceMfaLocalOnly: { set: false } }, org.id));
      const forced = await authorize();
      const s = ok(await createSession(byIntent(await succeeded(who))));
      expect(failed(await finalize(forced, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");
      const patched = ok(
        await sessions().call("PatchSession", { id: s.sessionId, sessionToken: s.sessionToken, checks: { totp: { code: totpCode(secret, 1) } } }, ui),
      );
      expect(await finish(forced, { id: s.sessionId, token: patched.sessionToken })).toMatchObject({ sub: userId, amr: ["fed", "otp", "mfa"], acr: ACR_MFA });
    });

    it("a person with a second factor gives it after an external login, forced or not (issue 41: the provider alone is not enough)", async () => {
      const { userId, who } = await linkedPerson();
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const flow = await authorize();
      const alone = ok(await createSession(byIntent(await succeeded(who))));
      expect(failed(await finalize(flow, { id: alone.sessionId, token: alone.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");
      const patched = ok(
        await sessions().call("PatchSession", { id: alone.sessionId, sessionToken: alone.sessionToken, checks: { totp: { code: totpCode(secret, 1) } } }, ui),
      );
      expect(await finish(flow, { id: alone.sessionId, token: patched.sessionToken })).toMatchObject({ sub: userId, amr: ["fed", "otp", "mfa"], acr: ACR_MFA });
    });

    it("acr_values=urn:platform:acr:mfa asks a second factor of a person without one to set one up, as forced MFA would", async () => {
      const { userId, who } = await linkedPerson();
      const plain = await authorize();
      const alone = ok(await createSession(byIntent(await succeeded(who))));
      expect(await finish(plain, { id: alone.sessionId, token: alone.sessionToken })).toMatchObject({ sub: userId, amr: ["fed"], acr: ACR_SFA });

      const flow = await authorize({ acr_values: ACR_MFA });
      const s = ok(await createSession(byIntent(await succeeded(who))));
      expect(failed(await finalize(flow, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");
    });

    it("refuses an external login through a provider of another organization, or one the user's organization switched off", async () => {
      const org = await createOrg(server, uniqueName("intent-reach"));
      const { userId, who } = await linkedPerson(org.id);
      const flow = await authorize();
      const s = ok(await createSession(byIntent(await succeeded(who))));
      await idpClient(base(), server.adminToken).ok("PatchGitHubIDP", {
        id: idpId,
        idp: { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } },
        ctx: { orgId: org.id },
      });
      try {
        expect(failed(await finalize(flow, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain(
          "no longer active in the user's organization",
        );
        const again = ok(await start());
        const back = await viaGitHub(again.authUrl, who);
        const refused = failed(
          await createSession(byIntent({ id: back.searchParams.get("id")!, token: back.searchParams.get("token")! })),
          Code.FailedPrecondition,
        );
        expect(refused.message).toContain("does not reach the user's organization");
      } finally {
        await idpClient(base(), server.adminToken).ok("PatchGitHubIDP", {
          id: idpId,
          idp: { idp: { statePolicy: "STATE_POLICY_INHERIT" } },
          ctx: { orgId: org.id },
        });
      }
      expect(await finish(flow, { id: s.sessionId, token: s.sessionToken })).toMatchObject({ sub: userId, amr: ["fed"] });
    });

    it("acr_values=urn:platform:acr:mfa with a person who has a second factor: the external login and a TOTP give acr mfa", async () => {
      const { userId, who } = await linkedPerson();
      const { secret } = ok(await users.call("AddTOTP", { id: userId }));
      ok(await users.call("VerifyTOTP", { id: userId, verification: { code: totpCode(secret) } }));
      const flow = await authorize({ acr_values: ACR_MFA });
      const s = ok(await createSession(byIntent(await succeeded(who))));
      expect(failed(await finalize(flow, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain("second factor");
      const patched = ok(
        await sessions().call("PatchSession", { id: s.sessionId, sessionToken: s.sessionToken, checks: { totp: { code: totpCode(secret, 1) } } }, ui),
      );
      expect(await finish(flow, { id: s.sessionId, token: patched.sessionToken })).toMatchObject({ sub: userId, amr: ["fed", "otp", "mfa"], acr: ACR_MFA });
    });

    it("refuses where the organization's login settings turn external login off, and once the link is removed", async () => {
      const org = await createOrg(server, uniqueName("intent-off"));
      const { userId, who } = await linkedPerson(org.id);
      const flow = await authorize();
      const s = ok(await createSession(byIntent(await succeeded(who))));
      ok(await loginSettings({ allowExternalIdp: { set: false } }, org.id));
      expect(failed(await finalize(flow, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain("identity provider");
      ok(await loginSettings({ allowExternalIdp: { reset: true } }, org.id));
      ok(await users.call("DeleteIDPLink", { id: userId, idpId, externalUserId: String(who.profile.id) }));
      expect(failed(await finalize(flow, { id: s.sessionId, token: s.sessionToken }), Code.FailedPrecondition).message).toContain("no longer linked");
    });
  });

  it("discovery lists the acr values", async () => {
    const doc = (await (await fetch(`${base()}/.well-known/openid-configuration`)).json()) as { acr_values_supported?: string[] };
    expect(doc.acr_values_supported).toEqual([ACR_SFA, ACR_MFA]);
  });
});
