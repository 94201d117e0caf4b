import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, exportPKCS8, generateKeyPair, importPKCS8, jwtVerify, SignJWT, type JWTPayload } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { API_BASIC, AUTH_CODE, BASIC, BEARER, CODE, JWT, NATIVE, NONE, PKJWT, POST, REFRESH, WEB, appClient, oidc, projectClient } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, DAY_MS, fromNow, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { Browser, formWith } from "./browser.js";

/*
 * Black-box tests of RFC 8693 token exchange at the token endpoint (src/oidc/endpoints/grants/
 * token-exchange.ts): the per-organization feature flag, the spec's token-type matrix,
 * impersonation with `act`, audience and scope rules, refresh tokens, and tokens of other
 * instances.
 */

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const TOKEN_EXCHANGE = "OIDC_GRANT_TYPE_TOKEN_EXCHANGE";
const T = {
  access: "urn:ietf:params:oauth:token-type:access_token",
  refresh: "urn:ietf:params:oauth:token-type:refresh_token",
  id: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  userId: "urn:platform:params:oauth:token-type:user_id",
};
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const PASSWORD = "Corr3ct-horse!";
const RP = "https://rp.example/cb";
const TTL_S = 1200;
const projectScope = (id: string) => `urn:platform:iam:org:project:id:${id}:aud`;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

type Auth = "basic" | "post" | "none" | "key";

interface App {
  appId: string;
  clientId: string;
  secret?: string;
  auth: Auth;
  key?: { kid: string; pem: string };
}

interface Machine {
  id: string;
  username: string;
  secret: string;
}

async function post(baseUrl: string, path: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Answer> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
  const res = await fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

function expectError(a: Answer, status: number, error: string) {
  expect({ status: a.status, error: a.body?.error }, JSON.stringify(a.body)).toEqual({ status, error });
  expect(a.body.access_token).toBeUndefined();
  expect(a.headers.get("cache-control") ?? "").toMatch(/no-store/);
}

describe.each(DATABASE_KINDS)("token exchange (%s)", (kind) => {
  let server: TestServer;
  let base: string;
  let users: Users;
  let projectId: string;
  let introspector: { clientId: string; secret: string };
  const apps = {} as Record<Auth, App>;
  /** BASIC, with authorization code and refresh but not token exchange. */
  let plainApp: App;
  /** Token exchange, in an organization that has not turned it on. */
  let offApp: App;
  let offOrg: string;
  let offProject: string;
  let opaqueMachine: Machine;
  let jwtMachine: Machine;
  let alice: { id: string; name: string };
  let bob: { id: string; name: string };
  let stranger: string;
  /** Alice's and Bob's tokens from the code flow of the BASIC app, with offline_access. */
  let aliceTokens: { access_token: string; id_token: string };
  let bobTokens: { access_token: string; id_token: string };
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  const features = () => protocolClient(PlatformFeatureSettings, "grpc", base);
  async function setOrgFlag(orgId: string, enabled: boolean | undefined) {
    const change: JsonObject = enabled === undefined ? { reset: true } : { set: enabled };
    ok(await features().call("SetFeatures", { ctx: { orgId }, settings: { tokenExchange: change } }, server.adminToken));
  }

  async function createApp(project: string, auth: Auth, config: Record<string, unknown> = {}): Promise<App> {
    const method = { basic: BASIC, post: POST, none: NONE, key: PKJWT }[auth];
    const made = await appClient(base, server.adminToken).ok("CreateApp", {
      projectId: project,
      app: {
        name: uniqueName(`te-${auth}`),
        oidc: oidc({
          redirectUris: [RP],
          responseTypes: [CODE],
          grantTypes: [AUTH_CODE, REFRESH, TOKEN_EXCHANGE],
          appType: auth === "none" ? NATIVE : WEB,
          authMethodType: method,
          accessTokenType: BEARER,
          ...config,
        }),
      },
    });
    const app: App = { appId: made.details.id, clientId: made.clientId, auth, ...(made.clientSecret && { secret: made.clientSecret }) };
    if (auth === "key") {
      const added = await appClient(base, server.adminToken).ok("AddAppKey", {
        appId: app.appId,
        key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) },
      });
      const file = JSON.parse(added.keyFile);
      app.key = { kid: file.keyId, pem: file.key };
    }
    return app;
  }

  /** A JWT signed with the app's key: a client assertion by default. */
  async function signedByApp(app: App, claims: Record<string, unknown> = {}, pem = app.key!.pem, kid = app.key!.kid): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: app.clientId, sub: app.clientId, aud: `${base}/oauth/v2/token`, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
      .setProtectedHeader({ alg: "ES256", kid })
      .sign(await importPKCS8(pem, "ES256"));
  }

  /** A token request of the app, authenticated by its registered method. */
  async function token(app: App, form: Record<string, string | string[]>, at = base): Promise<Answer> {
    switch (app.auth) {
      case "basic":
        return post(at, "/oauth/v2/token", form, { authorization: basic(app.clientId, app.secret!) });
      case "post":
        return post(at, "/oauth/v2/token", { ...form, client_id: app.clientId, client_secret: app.secret! });
      case "none":
        return post(at, "/oauth/v2/token", { ...form, client_id: app.clientId });
      case "key":
        return post(at, "/oauth/v2/token", {
          ...form,
          client_id: app.clientId,
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await signedByApp(app),
        });
    }
  }

  const exchange = (app: App, form: Record<string, string | string[]>, at = base) => token(app, { grant_type: GRANT, ...form }, at);

  /** Introspection by the project's API application, or by an application in the token's audience. */
  async function introspect(value: string, as: { clientId: string; secret?: string } = introspector): Promise<Record<string, unknown>> {
    const r = await post(base, "/oauth/v2/introspect", { token: value }, { authorization: basic(as.clientId, as.secret!) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  }

  async function verify(jwt: string, typ?: string): Promise<JWTPayload> {
    return (await jwtVerify(jwt, jwks, { issuer: base, ...(typ && { typ }) })).payload;
  }

  async function machine(jwt: boolean, baseUrl = base, adminToken = server.adminToken): Promise<Machine> {
    const calls = protocolClient(PlatformUsers, "grpc", baseUrl);
    const username = uniqueName("svc");
    const id = ok(
      await calls.call(
        "CreateUser",
        { user: machineUser(username, { accessTokenType: jwt ? "ACCESS_TOKEN_TYPE_JWT" : "ACCESS_TOKEN_TYPE_BEARER" }) },
        adminToken,
      ),
    ).details.id as string;
    const secret = ok(await calls.call("GenerateSecret", { id }, adminToken)).clientSecret as string;
    return { id, username, secret };
  }

  /** A machine user's access token by client_credentials, for the project's audience. */
  async function machineToken(m: Machine, scope = `openid profile ${projectScope(projectId)}`, baseUrl = base): Promise<string> {
    const r = await post(baseUrl, "/oauth/v2/token", { grant_type: "client_credentials", scope }, { authorization: basic(m.username, m.secret) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.access_token;
  }

  /** The code flow of an app through the login pages; the token response. */
  async function codeFlow(app: App, loginName: string, scope: string, at = base) {
    const verifier = client.randomPKCECodeVerifier();
    const url = new URL("/oauth/v2/authorize", at);
    const query = {
      client_id: app.clientId,
      redirect_uri: RP,
      response_type: "code",
      scope,
      state: client.randomState(),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    };
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const b = new Browser(at);
    let page = await b.open(url.href);
    page = await b.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    expect(page.left, page.html).toBe(true);
    const code = new URL(page.url).searchParams.get("code")!;
    const r = await token(app, { grant_type: "authorization_code", code, redirect_uri: RP, code_verifier: verifier }, at);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { access_token: string; id_token: string; refresh_token?: string };
  }

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_OIDC_ACCESS_TOKEN_TTL: "20m",
      PLATFORM_LOGIN_RATE_PER_IP: "100000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000",
    });
    base = server.baseUrl;
    users = new Users(server);
    jwks = createRemoteJWKSet(new URL(`${base}/oauth/v2/keys`));
    projectId = (await projectClient(base, server.adminToken).ok("CreateProject", { project: { name: uniqueName("te-project") } })).details.id;
    const api = await appClient(base, server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: uniqueName("introspector"), api: { authMethodType: API_BASIC } },
    });
    introspector = { clientId: api.clientId, secret: api.clientSecret };
    for (const auth of ["basic", "post", "none", "key"] as const)
      apps[auth] = await createApp(projectId, auth, auth === "basic" ? { accessTokenType: JWT } : {});
    const made = await appClient(base, server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: uniqueName("plain"), oidc: oidc({ redirectUris: [RP], responseTypes: [CODE], grantTypes: [AUTH_CODE, REFRESH], authMethodType: BASIC }) },
    });
    plainApp = { appId: made.details.id, clientId: made.clientId, secret: made.clientSecret, auth: "basic" };
    offOrg = (await createOrg(server, uniqueName("te-off"))).id;
    offProject = (await projectClient(base, server.adminToken).ok("CreateProject", { project: { name: uniqueName("off-project") }, ctx: { orgId: offOrg } }))
      .details.id;
    offApp = await createApp(offProject, "basic");

    opaqueMachine = await machine(false);
    jwtMachine = await machine(true);
    alice = { name: uniqueName("alice"), id: "" };
    alice.id = await users.create(humanUser(alice.name, { password: PASSWORD }, { nickName: "Ally" }));
    bob = { name: uniqueName("bob"), id: "" };
    bob.id = await users.create(humanUser(bob.name, { password: PASSWORD }));
    stranger = await users.create(humanUser(uniqueName("stranger"), { password: PASSWORD }), { orgId: offOrg });
    const offline = `openid profile email offline_access ${projectScope(projectId)}`;
    aliceTokens = await codeFlow(apps.basic, alice.name, offline);
    bobTokens = await codeFlow(apps.basic, bob.name, offline);
    await setOrgFlag(server.defaultOrgId, true);
  }, 180_000);
  afterAll(() => server?.close());

  describe("the feature flag and the application's grant types", () => {
    it("refuses with unauthorized_client while the organization has it off, and serves it once the organization turns it on", async () => {
      const subject = await machineToken(opaqueMachine, `openid ${projectScope(offProject)}`);
      const form = { subject_token: subject, subject_token_type: T.access };
      const off = await exchange(offApp, form);
      expectError(off, 400, "unauthorized_client");
      expect(off.body.error_description).toMatch(/not enabled/);

      await setOrgFlag(offOrg, true);
      const on = await exchange(offApp, form);
      expect(on.status, JSON.stringify(on.body)).toBe(200);
      await setOrgFlag(offOrg, false);
      expectError(await exchange(offApp, form), 400, "unauthorized_client");
      await setOrgFlag(offOrg, undefined);
    });

    it("refuses an application without the grant type with unauthorized_client, and a bad client with invalid_client", async () => {
      const subject = await machineToken(opaqueMachine);
      expectError(await exchange(plainApp, { subject_token: subject, subject_token_type: T.access }), 400, "unauthorized_client");
      const wrong = await post(
        base,
        "/oauth/v2/token",
        { grant_type: GRANT, subject_token: subject, subject_token_type: T.access },
        { authorization: basic(apps.basic.clientId, "wrong") },
      );
      expectError(wrong, 401, "invalid_client");
    });

    it("is advertised in discovery only while the instance has it on", async () => {
      const grants = async () =>
        ((await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { grant_types_supported: string[] }).grant_types_supported;
      expect(await grants()).not.toContain(GRANT);
      await setInstanceFlag(server, server.instanceId, "token_exchange", true);
      try {
        expect(await grants()).toContain(GRANT);
      } finally {
        await setInstanceFlag(server, server.instanceId, "token_exchange", undefined);
      }
      expect(await grants()).not.toContain(GRANT);
    });
  });

  describe("access tokens", () => {
    it("exchanges opaque and JWT access tokens for an opaque access token, with every client authentication method", async () => {
      for (const m of [opaqueMachine, jwtMachine]) {
        const subject = await machineToken(m);
        const subjectAud = (await introspect(subject)).aud;
        for (const auth of ["basic", "post", "none", "key"] as const) {
          const r = await exchange(apps[auth], { subject_token: subject, subject_token_type: T.access });
          expect(r.status, `${auth} ${JSON.stringify(r.body)}`).toBe(200);
          expect(r.body).toMatchObject({
            issued_token_type: T.access,
            token_type: "Bearer",
            expires_in: TTL_S,
            scope: `openid profile ${projectScope(projectId)}`,
          });
          expect(r.body.refresh_token).toBeUndefined();
          // The matrix: an access token is issued opaque, whatever the application's type (basic: JWT).
          expect(r.body.access_token.split(".").length, "opaque").not.toBe(3);
          const seen = await introspect(r.body.access_token);
          expect(seen).toMatchObject({ active: true, sub: m.id, client_id: apps[auth].clientId, aud: subjectAud, scope: r.body.scope });
          expect(seen).not.toHaveProperty("act");
          // With openid, an ID token of the subject for the client, without profile claims.
          const id = await verify(r.body.id_token);
          expect(id).toMatchObject({ sub: m.id, aud: apps[auth].clientId, at_hash: expect.any(String) });
          expect(id).not.toHaveProperty("name");
          expect(id).not.toHaveProperty("act");
        }
      }
    });

    it("issues a JWT access token when the JWT type is asked for", async () => {
      const subject = await machineToken(opaqueMachine);
      const r = await exchange(apps.post, { subject_token: subject, subject_token_type: T.access, requested_token_type: T.jwt });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ issued_token_type: T.jwt, token_type: "Bearer", expires_in: TTL_S });
      expect(decodeProtectedHeader(r.body.access_token).typ).toBe("at+jwt");
      const claims = await verify(r.body.access_token, "at+jwt");
      expect(claims).toMatchObject({ sub: opaqueMachine.id, client_id: apps.post.clientId, aud: [opaqueMachine.username, projectId], scope: r.body.scope });
      expect((await introspect(r.body.access_token)).active).toBe(true);
    });

    it("issues an ID token as the token when asked for (token_type N_A), with the user's claims", async () => {
      const r = await exchange(apps.basic, {
        subject_token: aliceTokens.access_token,
        subject_token_type: T.access,
        requested_token_type: T.id,
        scope: "openid profile",
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ issued_token_type: T.id, token_type: "N_A", scope: "openid profile" });
      expect(r.body.refresh_token).toBeUndefined();
      expect(r.body.id_token).toBeUndefined();
      const claims = await verify(r.body.access_token);
      expect(claims).toMatchObject({ sub: alice.id, aud: apps.basic.clientId, nickname: "Ally" });
      expect(decodeProtectedHeader(r.body.access_token).typ ?? "JWT").not.toBe("at+jwt");
    });

    it("accepts the client's own ID token as the subject, with its user's claims but nothing it did not hold", async () => {
      const r = await exchange(apps.basic, { subject_token: aliceTokens.id_token, subject_token_type: T.id, scope: "openid email" });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // The audience is the ID token's: the application it was issued to.
      expect(await introspect(r.body.access_token, apps.basic)).toMatchObject({
        active: true,
        sub: alice.id,
        aud: [apps.basic.clientId],
        scope: "openid email",
      });
      expectError(
        await exchange(apps.basic, { subject_token: aliceTokens.id_token, subject_token_type: T.id, scope: "openid offline_access" }),
        400,
        "invalid_scope",
      );
      // An access token is no ID token, nor the other way round.
      expectError(await exchange(apps.basic, { subject_token: aliceTokens.access_token, subject_token_type: T.id }), 400, "invalid_request");
      expectError(await exchange(apps.basic, { subject_token: aliceTokens.id_token, subject_token_type: T.access }), 400, "invalid_request");
    });

    it("refuses an ID token issued to another client, of another organization or of the same project, as subject and as actor", async () => {
      // A leaked ID token of application `basic`, exchanged by an application of another
      // organization that turned token exchange on: it must not become that user's token.
      await setOrgFlag(offOrg, true);
      try {
        const leaked = { subject_token: aliceTokens.id_token, subject_token_type: T.id, requested_token_type: T.jwt, scope: "openid profile email" };
        const r = await exchange(offApp, leaked);
        expectError(r, 400, "invalid_request");
        expect(r.body.error_description).toMatch(/subject_token is invalid: the token was not issued for this client/);
        expect(r.body.id_token).toBeUndefined();
        // The same rule for the actor of an impersonation.
        const asActor = await exchange(offApp, {
          subject_token: stranger,
          subject_token_type: T.userId,
          actor_token: bobTokens.id_token,
          actor_token_type: T.id,
          scope: "openid",
        });
        expectError(asActor, 400, "invalid_request");
        expect(asActor.body.error_description).toMatch(/actor_token is invalid: the token was not issued for this client/);
      } finally {
        await setOrgFlag(offOrg, undefined);
      }
      // Another application of the same project: the ID token names its client only.
      for (const auth of ["none", "post", "key"] as const) {
        const r = await exchange(apps[auth], { subject_token: aliceTokens.id_token, subject_token_type: T.id, scope: "openid" });
        expectError(r, 400, "invalid_request");
        const actor = await exchange(apps[auth], {
          subject_token: alice.id,
          subject_token_type: T.userId,
          actor_token: bobTokens.id_token,
          actor_token_type: T.id,
          scope: "openid",
        });
        expectError(actor, 400, "invalid_request");
      }
      // The owner still exchanges its own, as subject and as actor.
      const own = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: bobTokens.id_token,
        actor_token_type: T.id,
        scope: "openid",
      });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
    });

    it("refuses an ID token of this instance's keys that names another issuer (another of its hosts)", async () => {
      // The instance answers on 127.0.0.1 too, where its issuer is another URL under the same keys.
      const other = base.replace("localhost", "127.0.0.1");
      const tokens = await codeFlow(apps.basic, alice.name, "openid", other);
      expect(decodeJwt(tokens.id_token).iss).toBe(other);
      const here = await exchange(apps.basic, { subject_token: tokens.id_token, subject_token_type: T.id, scope: "openid" });
      expectError(here, 400, "invalid_request");
      expect(here.body.error_description).toMatch(/iss/);
      const there = await exchange(apps.basic, { subject_token: tokens.id_token, subject_token_type: T.id, scope: "openid" }, other);
      expect(there.status, JSON.stringify(there.body)).toBe(200);
    });

    it("narrows the scope, and refuses a scope the subject token does not hold", async () => {
      const subject = await machineToken(opaqueMachine);
      const r = await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, scope: "openid" });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.scope).toBe("openid");
      expectError(await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, scope: "openid email" }), 400, "invalid_scope");
    });

    it("refuses a revoked or unknown subject token, and one issued for another client", async () => {
      const subject = await machineToken(opaqueMachine);
      const revoked = await post(base, "/oauth/v2/revoke", { token: subject }, { authorization: basic(opaqueMachine.username, opaqueMachine.secret) });
      expect(revoked.status).toBe(200);
      expectError(await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access }), 400, "invalid_request");
      expectError(await exchange(apps.basic, { subject_token: "no-such-token", subject_token_type: T.access }), 400, "invalid_request");
      // Without the project's audience scope, the token is only the machine user's.
      const foreign = await machineToken(opaqueMachine, "openid");
      const r = await exchange(apps.basic, { subject_token: foreign, subject_token_type: T.access });
      expectError(r, 400, "invalid_request");
      expect(r.body.error_description).toMatch(/not issued for this client/);
    });
  });

  describe("audience", () => {
    it("accepts a subset of the subject's and actor's audiences and refuses anything else with invalid_target", async () => {
      const subject = await machineToken(opaqueMachine);
      const narrowed = await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, audience: projectId });
      expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
      expect((await introspect(narrowed.body.access_token)).aud).toEqual([projectId]);

      const wider = await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, audience: [projectId, "someone-else"] });
      expectError(wider, 400, "invalid_target");
      expect(wider.body.error_description).toMatch(/someone-else/);

      // With an actor, the actor's audience counts too.
      const actor = await machineToken(jwtMachine);
      const both = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: actor,
        actor_token_type: T.access,
        audience: [jwtMachine.username, projectId],
        requested_token_type: T.jwt,
      });
      expect(both.status, JSON.stringify(both.body)).toBe(200);
      expect((await verify(both.body.access_token, "at+jwt")).aud).toEqual([jwtMachine.username, projectId]);
    });

    it("refuses the resource parameter with invalid_target", async () => {
      const subject = await machineToken(opaqueMachine);
      const r = await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, resource: "https://api.example" });
      expectError(r, 400, "invalid_target");
    });
  });

  describe("impersonation", () => {
    it("issues tokens for the subject that name the actor in act, in the JWT, the ID token and at introspection", async () => {
      const actor = await machineToken(jwtMachine);
      const r = await exchange(apps.key, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: actor,
        actor_token_type: T.access,
        requested_token_type: T.jwt,
        scope: "openid profile",
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ issued_token_type: T.jwt, token_type: "Bearer", scope: "openid profile" });
      const act = { sub: jwtMachine.id, iss: base };
      expect(await verify(r.body.access_token, "at+jwt")).toMatchObject({ sub: alice.id, act });
      expect(await verify(r.body.id_token)).toMatchObject({ sub: alice.id, aud: apps.key.clientId, act });
      expect(await introspect(r.body.access_token)).toMatchObject({ active: true, sub: alice.id, act });

      // Opaque, with an ID token as the actor: the act is kept with the stored token.
      const opaque = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: bobTokens.id_token,
        actor_token_type: T.id,
        scope: "openid",
      });
      expect(opaque.status, JSON.stringify(opaque.body)).toBe(200);
      expect(await introspect(opaque.body.access_token, apps.basic)).toMatchObject({
        active: true,
        sub: alice.id,
        aud: [apps.basic.clientId],
        act: { sub: bob.id, iss: base },
      });

      // Exchanged again without an actor, the token stays an impersonation.
      const again = await exchange(apps.basic, { subject_token: opaque.body.access_token, subject_token_type: T.access, requested_token_type: T.jwt });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(await verify(again.body.access_token, "at+jwt")).toMatchObject({ sub: alice.id, act: { sub: bob.id, iss: base } });
    });

    it("takes a user id only with an actor token, with its type, and only of the application's organization", async () => {
      const actor = await machineToken(jwtMachine);
      const noActor = await exchange(apps.basic, { subject_token: alice.id, subject_token_type: T.userId });
      expectError(noActor, 400, "invalid_request");
      expect(noActor.body.error_description).toMatch(/actor_token/);
      const noType = await exchange(apps.basic, { subject_token: alice.id, subject_token_type: T.userId, actor_token: actor });
      expectError(noType, 400, "invalid_request");
      expect(noType.body.error_description).toMatch(/actor_token_type/);
      const typeAlone = await exchange(apps.basic, {
        subject_token: await machineToken(opaqueMachine),
        subject_token_type: T.access,
        actor_token_type: T.access,
      });
      expectError(typeAlone, 400, "invalid_request");
      expectError(
        await exchange(apps.basic, { subject_token: stranger, subject_token_type: T.userId, actor_token: actor, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      expectError(
        await exchange(apps.basic, { subject_token: "nobody", subject_token_type: T.userId, actor_token: actor, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      // A user id is no actor.
      expectError(
        await exchange(apps.basic, {
          subject_token: await machineToken(opaqueMachine),
          subject_token_type: T.access,
          actor_token: bob.id,
          actor_token_type: T.userId,
        }),
        400,
        "invalid_request",
      );
      expectError(await exchange(apps.basic, { subject_token: "", subject_token_type: T.access }), 400, "invalid_request");
    });

    it("takes a JWT signed by the client for a user, with an actor token, once", async () => {
      const actor = await machineToken(jwtMachine);
      const app = apps.key;
      const subject = await signedByApp(app, { sub: alice.id, aud: base });
      const alone = await exchange(app, { subject_token: subject, subject_token_type: T.jwt });
      expectError(alone, 400, "invalid_request");
      const r = await exchange(app, {
        subject_token: subject,
        subject_token_type: T.jwt,
        actor_token: actor,
        actor_token_type: T.access,
        requested_token_type: T.jwt,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(await verify(r.body.access_token, "at+jwt")).toMatchObject({ sub: alice.id, act: { sub: jwtMachine.id, iss: base } });
      // Used once; another key; another issuer; a client without keys; JWT as actor.
      expectError(
        await exchange(app, { subject_token: subject, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      const otherKey = await signedByApp(app, { sub: alice.id, aud: base }, await exportPKCS8(privateKey), app.key!.kid);
      expectError(
        await exchange(app, { subject_token: otherKey, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      const otherIssuer = await signedByApp(app, { sub: alice.id, aud: base, iss: "someone" });
      expectError(
        await exchange(app, { subject_token: otherIssuer, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      const keyless = await exchange(apps.basic, {
        subject_token: await signedByApp(app, { sub: alice.id, aud: base, iss: apps.basic.clientId }),
        subject_token_type: T.jwt,
        actor_token: actor,
        actor_token_type: T.access,
      });
      expectError(keyless, 400, "invalid_request");
      const asActor = await exchange(app, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: await signedByApp(app, { sub: alice.id, aud: base }),
        actor_token_type: T.jwt,
      });
      expectError(asActor, 400, "invalid_request");
    });
  });

  describe("refresh tokens", () => {
    it("refuses refresh tokens as subject, actor and requested type", async () => {
      const subject = await machineToken(opaqueMachine);
      const offline = await codeFlow(apps.basic, alice.name, "openid offline_access");
      expect(offline.refresh_token).toBeTruthy();
      expectError(await exchange(apps.basic, { subject_token: offline.refresh_token!, subject_token_type: T.refresh }), 400, "invalid_request");
      expectError(
        await exchange(apps.basic, { subject_token: alice.id, subject_token_type: T.userId, actor_token: offline.refresh_token!, actor_token_type: T.refresh }),
        400,
        "invalid_request",
      );
      expectError(
        await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, requested_token_type: T.refresh }),
        400,
        "invalid_request",
      );
      expectError(await exchange(apps.basic, { subject_token: subject, subject_token_type: T.access, requested_token_type: T.userId }), 400, "invalid_request");
    });

    it("issues a refresh token with offline_access, whose refreshed tokens keep the actor (ID token too) and the audience", async () => {
      const r = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: bobTokens.access_token,
        actor_token_type: T.access,
        scope: "openid offline_access",
        audience: projectId,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.scope).toBe("openid offline_access");
      expect(typeof r.body.refresh_token).toBe("string");
      const act = { sub: bob.id, iss: base };
      expect(await verify(r.body.id_token)).toMatchObject({ sub: alice.id, aud: apps.basic.clientId, act });
      expect(await introspect(r.body.access_token)).toMatchObject({ active: true, sub: alice.id, aud: [projectId], act });

      const refreshed = await token(apps.basic, { grant_type: "refresh_token", refresh_token: r.body.refresh_token });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      expect(refreshed.body.refresh_token).not.toBe(r.body.refresh_token);
      // The basic app issues JWT access tokens at its refresh grant.
      expect(decodeJwt(refreshed.body.access_token)).toMatchObject({ sub: alice.id, aud: [projectId], act });
      expect(await introspect(refreshed.body.access_token)).toMatchObject({ active: true, sub: alice.id, act });
      // Its ID token names the actor as the first one did, and again after the next rotation.
      expect(await verify(refreshed.body.id_token)).toMatchObject({ sub: alice.id, aud: apps.basic.clientId, act });
      const rotated = await token(apps.basic, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(await verify(rotated.body.id_token)).toMatchObject({ sub: alice.id, act });

      // Without offline_access, or for an ID token, no refresh token.
      const plain = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: bobTokens.access_token,
        actor_token_type: T.access,
        scope: "openid",
      });
      expect(plain.status).toBe(200);
      expect(plain.body.refresh_token).toBeUndefined();
      // offline_access is the actor's to give: a machine token never holds it.
      const machineActor = await exchange(apps.basic, {
        subject_token: alice.id,
        subject_token_type: T.userId,
        actor_token: await machineToken(jwtMachine),
        actor_token_type: T.access,
        scope: "openid offline_access",
      });
      expectError(machineActor, 400, "invalid_scope");
    });
  });

  describe("instances", () => {
    it("refuses tokens of another instance", async () => {
      const other = await server.createInstance("127.0.0.1");
      const foreign = await machine(true, other.baseUrl, other.adminToken);
      const foreignToken = await machineToken(foreign, "openid", other.baseUrl);
      const viaJwt = await exchange(apps.basic, { subject_token: foreignToken, subject_token_type: T.access });
      expectError(viaJwt, 400, "invalid_request");
      // As an actor, and an ID token of the other instance.
      expectError(
        await exchange(apps.basic, { subject_token: alice.id, subject_token_type: T.userId, actor_token: foreignToken, actor_token_type: T.access }),
        400,
        "invalid_request",
      );
      const foreignOpaque = await machine(false, other.baseUrl, other.adminToken);
      expectError(
        await exchange(apps.basic, { subject_token: await machineToken(foreignOpaque, "openid", other.baseUrl), subject_token_type: T.access }),
        400,
        "invalid_request",
      );
      // The other instance's user id is unknown here.
      expectError(
        await exchange(apps.basic, {
          subject_token: foreign.id,
          subject_token_type: T.userId,
          actor_token: await machineToken(jwtMachine),
          actor_token_type: T.access,
        }),
        400,
        "invalid_request",
      );
    });
  });
});
