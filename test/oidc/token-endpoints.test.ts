import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { decodeJwt, importPKCS8, SignJWT } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { at, must, uniqueDomain } from "../instances/helpers.js";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, DAY_MS, fromNow, machineUser, ok, uniqueName, Users, type Msg } from "../users/helpers.js";

/*
 * Black-box tests of the token endpoints of ours (src/oidc/endpoints/): introspection,
 * revocation and userinfo, with access tokens of machine users issued by client_credentials,
 * both opaque and JWT; the resource APIs accepting those tokens on every protocol; and a
 * blocked instance at every OpenID Connect endpoint.
 */

const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const projectScope = (id: string) => `urn:platform:iam:org:project:id:${id}:aud`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FORMATS = ["opaque", "jwt"] as const;
type Format = (typeof FORMATS)[number];
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const INTROSPECT = "/oauth/v2/introspect";
const REVOKE = "/oauth/v2/revoke";
const USERINFO = "/oidc/v1/userinfo";
const TOKEN = "/oauth/v2/token";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Msg;
}

/**
 * One plain HTTP/1.1 request to the test server at 127.0.0.1, with `host` as the Host
 * header when given (how another instance is reached), so that statuses, headers and
 * bodies are seen exactly.
 */
function raw(
  baseUrl: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; form?: Record<string, string>; body?: string; host?: string } = {},
): Promise<Raw> {
  const url = new URL(path, baseUrl);
  const body = opts.form ? new URLSearchParams(opts.form).toString() : opts.body;
  const headers: Record<string, string> = {
    ...(opts.form && { "content-type": "application/x-www-form-urlencoded" }),
    // The instance and the issuer are the Host's: localhost:<port> unless told otherwise.
    host: opts.host ? `${opts.host}:${url.port}` : url.host,
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: "127.0.0.1",
        port: url.port,
        path: url.pathname + url.search,
        method: opts.method ?? (body !== undefined ? "POST" : "GET"),
        headers,
        agent: false,
      },
      (res) => {
        let text = "";
        res
          .setEncoding("utf8")
          .on("data", (c: string) => (text += c))
          .on("end", () => {
            let json: Msg;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode!, headers: res.headers, text, json });
          });
      },
    );
    r.on("error", reject).end(body);
  });
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Machine {
  id: string;
  username: string;
  secret: string;
  loginName: string;
  orgId: string;
}

interface App {
  appId: string;
  clientId: string;
  secret?: string;
  projectId: string;
}

interface KeyApp extends App {
  keyId: string;
  key: Awaited<ReturnType<typeof importPKCS8>>;
}

/** The fixtures of one instance: projects, applications and a way to make machine users and tokens. */
class Fixture {
  readonly users: Users;
  readonly apps;
  readonly projects;
  readonly orgs;
  constructor(readonly server: TestServer) {
    this.users = new Users(server);
    this.apps = protocolClient(PlatformApps, "grpc", server.baseUrl);
    this.projects = protocolClient(PlatformProjects, "grpc", server.baseUrl);
    this.orgs = protocolClient(PlatformOrganizations, "grpc", server.baseUrl);
  }

  get baseUrl() {
    return this.server.baseUrl;
  }

  async project(name = uniqueName("proj")): Promise<string> {
    return ok(await this.projects.call("CreateProject", { project: { name } }, this.server.adminToken)).details.id as string;
  }

  async app(projectId: string, app: JsonObject): Promise<App> {
    const m = ok(await this.apps.call("CreateApp", { projectId, app: { name: uniqueName("app"), ...app } }, this.server.adminToken));
    return { appId: m.details.id, clientId: m.clientId, secret: m.clientSecret || undefined, projectId };
  }

  async apiBasicApp(projectId: string): Promise<App & { secret: string }> {
    const a = await this.app(projectId, { api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } });
    expect(a.secret).toBeTruthy();
    return a as App & { secret: string };
  }

  async apiKeyApp(projectId: string): Promise<KeyApp> {
    const a = await this.app(projectId, { api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } });
    const added = ok(
      await this.apps.call("AddAppKey", { appId: a.appId, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } }, this.server.adminToken),
    );
    const file = JSON.parse(added.keyFile);
    expect(file).toMatchObject({
      type: "application",
      keyId: expect.any(String),
      key: expect.stringContaining("PRIVATE KEY"),
      appId: a.appId,
      clientId: a.clientId,
    });
    return { ...a, keyId: file.keyId, key: await importPKCS8(file.key, "ES256") };
  }

  async machine(opts: { jwt?: boolean; orgId?: string; primaryDomain?: string } = {}): Promise<Machine> {
    const username = uniqueName("svc");
    const id = await this.users.create(
      machineUser(username, { accessTokenType: opts.jwt ? "ACCESS_TOKEN_TYPE_JWT" : "ACCESS_TOKEN_TYPE_BEARER" }),
      opts.orgId ? { orgId: opts.orgId } : undefined,
    );
    const secret = ok(await this.users.call("GenerateSecret", { id })).clientSecret as string;
    const user = await this.users.get(id);
    return { id, username, secret, loginName: user.loginName, orgId: opts.orgId ?? this.server.defaultOrgId };
  }

  /** An access token by client_credentials; fails the test unless issued. */
  async token(m: Machine, scope: string): Promise<string> {
    const r = await raw(this.baseUrl, TOKEN, { form: { grant_type: "client_credentials", scope }, headers: { authorization: basic(m.username, m.secret) } });
    expect(r.status, r.text).toBe(200);
    return r.json.access_token as string;
  }

  async config(app: App | KeyApp): Promise<client.Configuration> {
    const auth = "key" in app ? client.PrivateKeyJwt({ key: app.key, kid: app.keyId }) : client.ClientSecretBasic(app.secret!);
    return client.discovery(new URL(this.baseUrl), app.clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
  }

  async machineConfig(m: Machine): Promise<client.Configuration> {
    return client.discovery(new URL(this.baseUrl), m.username, undefined, client.ClientSecretBasic(m.secret), { execute: [client.allowInsecureRequests] });
  }

  introspect(app: App, token: string): Promise<Raw> {
    return raw(this.baseUrl, INTROSPECT, { form: { token }, headers: { authorization: basic(app.clientId, app.secret!) } });
  }

  revokeAs(m: Machine, token: string): Promise<Raw> {
    return raw(this.baseUrl, REVOKE, { form: { token }, headers: { authorization: basic(m.username, m.secret) } });
  }

  userinfo(token: string, method: "GET" | "POST" = "GET"): Promise<Raw> {
    return method === "GET"
      ? raw(this.baseUrl, USERINFO, { headers: bearer(token) })
      : raw(this.baseUrl, USERINFO, { method: "POST", headers: bearer(token), form: {} });
  }

  /** GetUser of itself over a protocol, with the access token. */
  getSelf(m: Machine, token: string, protocol: (typeof PROTOCOLS)[number] = "grpc"): Promise<CallResult> {
    return protocolClient(PlatformUsers, protocol, this.baseUrl).call("GetUser", { id: m.id }, token);
  }

  /** A client assertion signed with the app's key, with claims overridden. */
  async assertion(app: KeyApp, claims: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: app.clientId, sub: app.clientId, aud: this.baseUrl, jti: randomBytes(12).toString("hex"), iat: now, exp: now + 60, ...claims })
      .setProtectedHeader({ alg: "ES256", kid: app.keyId })
      .sign(app.key);
  }
}

function expectUnauthenticated(r: CallResult, label: string) {
  expect(r, `${label} ${JSON.stringify(r)}`).toMatchObject({ ok: false, code: Code.Unauthenticated });
  if (r.httpStatus !== undefined) expect(r.httpStatus, label).toBe(401);
}

function expectNoStore(r: Raw, label = "") {
  expect(r.headers["cache-control"], `${label} cache-control`).toBe("no-store");
}

function expectOAuthError(r: Raw, status: number, error: string, label = "") {
  expect({ status: r.status, error: r.json?.error }, `${label} ${r.text}`).toEqual({ status, error });
  expect(r.json.error_description, label).toEqual(expect.any(String));
  expectNoStore(r, label);
}

describe.each(DATABASE_KINDS)("token endpoints (%s)", (kind) => {
  let server: TestServer;
  let f: Fixture;
  let projectA: string;
  let projectB: string;
  let apiBasic: App & { secret: string };
  let apiKey: KeyApp;
  let appOfB: App & { secret: string };

  beforeAll(async () => {
    server = await startTestServer(kind);
    f = new Fixture(server);
    projectA = await f.project();
    projectB = await f.project();
    apiBasic = await f.apiBasicApp(projectA);
    apiKey = await f.apiKeyApp(projectA);
    appOfB = await f.apiBasicApp(projectB);
  });
  afterAll(() => server?.close());

  describe("introspection", () => {
    it.each(FORMATS)("of a %s token by an API app (basic, openid-client): active with exactly the expected fields", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const scope = `openid ${projectScope(projectA)}`;
      const token = await f.token(m, scope);
      if (format === "jwt") expect(decodeJwt(token)).toMatchObject({ sub: m.id, client_id: m.username });
      else expect(token.split(".").length).not.toBe(3);
      const result = await client.tokenIntrospection(await f.config(apiBasic), token);
      expect(result).toEqual({
        active: true,
        aud: [m.username, projectA],
        client_id: m.username,
        exp: expect.any(Number),
        iat: expect.any(Number),
        nbf: expect.any(Number),
        iss: server.baseUrl,
        jti: expect.any(String),
        scope,
        token_type: "Bearer",
        username: m.loginName,
        sub: m.id,
      });
      expect(m.loginName).toMatch(new RegExp(`^${m.username}@`));
      expect(result.exp! - result.iat!).toBe(3600);
      expect(result.nbf).toBe(result.iat);
      expect(Math.abs(result.iat! - Date.now() / 1000)).toBeLessThan(30);
      if (format === "jwt") {
        const claims = decodeJwt(token);
        expect(result.jti).toBe(claims.jti);
        expect(result.exp).toBe(claims.exp);
        expect(result.iat).toBe(claims.iat);
      }
    });

    it.each(FORMATS)("of a %s token by an API app with private_key_jwt (openid-client): active", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `openid profile ${projectScope(projectA)} ${PLATFORM_SCOPE}`);
      const config = await f.config(apiKey);
      const result = await client.tokenIntrospection(config, token);
      expect(result).toMatchObject({
        active: true,
        aud: [m.username, projectA, "platform"],
        client_id: m.username,
        sub: m.id,
        username: m.loginName,
        iss: server.baseUrl,
        token_type: "Bearer",
      });
      // Each call signs a fresh assertion (new jti): a second one works too.
      expect((await client.tokenIntrospection(config, token)).active).toBe(true);
      expect((await client.tokenIntrospection(config, "garbage")).active).toBe(false);
    });

    it("releases profile claims only with the profile scope, email only with email (a machine user has none)", async () => {
      const m = await f.machine({ jwt: true });
      const aud = projectScope(projectA);
      const bare = await f.introspect(apiBasic, await f.token(m, `openid ${aud}`));
      expect(bare.json.active).toBe(true);
      for (const claim of ["name", "preferred_username", "updated_at", "email", "urn:platform:iam:user:resourceowner:id"])
        expect(bare.json, claim).not.toHaveProperty(claim);

      const profile = await f.introspect(apiBasic, await f.token(m, `openid profile ${aud}`));
      expect(profile.json).toMatchObject({
        active: true,
        name: `svc ${m.username}`,
        preferred_username: m.loginName,
        updated_at: expect.any(Number),
        "urn:platform:iam:user:resourceowner:id": server.defaultOrgId,
        "urn:platform:iam:user:resourceowner:name": expect.any(String),
        "urn:platform:iam:user:resourceowner:primary_domain": m.loginName.split("@")[1],
      });
      expect(profile.json).not.toHaveProperty("email");

      const email = await f.introspect(apiBasic, await f.token(m, `openid email ${aud}`));
      expect(email.json.active).toBe(true);
      expect(email.json).not.toHaveProperty("name");
      expect(email.json).not.toHaveProperty("preferred_username");
      expect(email.json).not.toHaveProperty("email");
    });

    it.each(FORMATS)("of a %s token: inactive for an app whose project is not in aud; active for the app of the project asked for", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const onlyB = await f.token(m, `openid ${projectScope(projectB)}`);
      const byA = await f.introspect(apiBasic, onlyB);
      expect(byA.status).toBe(200);
      expect(byA.json).toEqual({ active: false });
      expectNoStore(byA);
      expect((await f.introspect(appOfB, onlyB)).json).toMatchObject({ active: true, aud: [m.username, projectB] });
      // Without any project scope: only the machine user itself is in aud.
      const none = await f.token(m, "openid");
      expect((await f.introspect(apiBasic, none)).json).toEqual({ active: false });
      expect((await f.introspect(appOfB, none)).json).toEqual({ active: false });
      // A project that does not exist is dropped from aud and scope.
      const ghost = await f.token(m, `openid ${projectScope("no-such-project")} ${projectScope(projectA)}`);
      const r = await f.introspect(apiBasic, ghost);
      expect(r.json).toMatchObject({ active: true, aud: [m.username, projectA], scope: `openid ${projectScope(projectA)}` });
    });

    it.each(FORMATS)("of a %s token: inactive once revoked", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `openid ${projectScope(projectA)}`);
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
      expect((await f.revokeAs(m, token)).status).toBe(200);
      expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
    });

    it.each(FORMATS)("of a %s token: inactive while the machine user is locked or deactivated, active again once unlocked", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `openid ${projectScope(projectA)}`);
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
      ok(await f.users.call("LockUser", { id: m.id }));
      expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
      ok(await f.users.call("UnlockUser", { id: m.id }));
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
      ok(await f.users.call("DeactivateUser", { id: m.id }));
      expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
    });

    it.each(FORMATS)("of a %s token: inactive while the user's organization is deactivated", async (format) => {
      const org = await createOrg(server, uniqueName("Org"));
      const m = await f.machine({ jwt: format === "jwt", orgId: org.id });
      expect(m.loginName).toBe(`${m.username}@${org.primary}`);
      const token = await f.token(m, `openid profile ${projectScope(projectA)}`);
      expect((await f.introspect(apiBasic, token)).json).toMatchObject({
        active: true,
        username: `${m.username}@${org.primary}`,
        "urn:platform:iam:user:resourceowner:id": org.id,
      });
      ok(await f.orgs.call("DeactivateOrganization", { id: org.id }, server.adminToken));
      expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
      ok(await f.orgs.call("ReactivateOrganization", { id: org.id }, server.adminToken));
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
    });

    it("of garbage: inactive, whatever it looks like", async () => {
      const m = await f.machine({ jwt: true });
      const jwt = await f.token(m, `openid ${projectScope(projectA)}`);
      const [h, p] = jwt.split(".");
      const tampered = `${h}.${p}.${Buffer.from("not the signature").toString("base64url")}`;
      const forged = await new SignJWT({ ...decodeJwt(jwt) }).setProtectedHeader({ alg: "ES256", kid: apiKey.keyId, typ: "at+jwt" }).sign(apiKey.key);
      for (const token of ["garbage", "a.b.c", "x".repeat(5000), tampered, forged, " ", "%00"]) {
        const r = await f.introspect(apiBasic, token);
        expect({ status: r.status, body: r.json }, token.slice(0, 20)).toEqual({ status: 200, body: { active: false } });
      }
    });

    describe("refusals", () => {
      let token: string;
      beforeAll(async () => {
        token = await f.token(await f.machine({ jwt: true }), `openid ${projectScope(projectA)}`);
      });

      it("client_secret_post (even with the right secret) is 401 invalid_client", async () => {
        const r = await raw(server.baseUrl, INTROSPECT, { form: { token, client_id: apiBasic.clientId, client_secret: apiBasic.secret } });
        expectOAuthError(r, 401, "invalid_client");
      });

      it("no client authentication is 401 invalid_client: client_id alone (none), and nothing at all", async () => {
        expectOAuthError(await raw(server.baseUrl, INTROSPECT, { form: { token, client_id: apiBasic.clientId } }), 401, "invalid_client", "client_id only");
        expectOAuthError(await raw(server.baseUrl, INTROSPECT, { form: { token } }), 401, "invalid_client", "nothing");
      });

      it("a wrong secret over Basic is 401 invalid_client with WWW-Authenticate: Basic; an unknown client too", async () => {
        const wrong = await raw(server.baseUrl, INTROSPECT, { form: { token }, headers: { authorization: basic(apiBasic.clientId, "wrong-secret") } });
        expectOAuthError(wrong, 401, "invalid_client", "wrong secret");
        expect(String(wrong.headers["www-authenticate"])).toMatch(/^Basic\b/);
        const unknown = await raw(server.baseUrl, INTROSPECT, { form: { token }, headers: { authorization: basic("no-such-client", "secret") } });
        expectOAuthError(unknown, 401, "invalid_client", "unknown client");
        expect(String(unknown.headers["www-authenticate"])).toMatch(/^Basic\b/);
      });

      it("a machine user as the client is 401 invalid_client", async () => {
        const m = await f.machine({ jwt: true });
        const own = await f.token(m, `openid ${projectScope(projectA)}`);
        const r = await raw(server.baseUrl, INTROSPECT, { form: { token: own }, headers: { authorization: basic(m.username, m.secret) } });
        expectOAuthError(r, 401, "invalid_client");
        await expect(client.tokenIntrospection(await f.machineConfig(m), own)).rejects.toThrow();
      });

      it("a deactivated app, or an app of a deactivated project, is 401 invalid_client; reactivated it works again", async () => {
        const app = await f.apiBasicApp(projectA);
        expect((await f.introspect(app, token)).json.active).toBe(true);
        ok(await f.apps.call("DeactivateApp", { id: app.appId }, server.adminToken));
        expectOAuthError(await f.introspect(app, token), 401, "invalid_client", "app deactivated");
        ok(await f.apps.call("ReactivateApp", { id: app.appId }, server.adminToken));
        expect((await f.introspect(app, token)).json.active).toBe(true);

        const project = await f.project();
        const inner = await f.apiBasicApp(project);
        const innerKey = await f.apiKeyApp(project);
        const m = await f.machine({ jwt: false });
        const t = await f.token(m, `openid ${projectScope(project)}`);
        expect((await f.introspect(inner, t)).json.active).toBe(true);
        ok(await f.projects.call("DeactivateProject", { id: project }, server.adminToken));
        expectOAuthError(await f.introspect(inner, t), 401, "invalid_client", "project deactivated (basic)");
        const assertion = await f.assertion(innerKey);
        expectOAuthError(
          await raw(server.baseUrl, INTROSPECT, { form: { token: t, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion } }),
          401,
          "invalid_client",
          "project deactivated (private_key_jwt)",
        );
      });

      it("private_key_jwt: aud may be the issuer or the endpoint; a replayed jti, a wrong aud, a foreign key, a long lifetime or no jti are 401", async () => {
        const post = (assertion: string) =>
          raw(server.baseUrl, INTROSPECT, { form: { token, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion } });
        const first = await f.assertion(apiKey);
        const okay = await post(first);
        expect(okay.status, okay.text).toBe(200);
        expect(okay.json.active).toBe(true);
        expectNoStore(okay);
        expectOAuthError(await post(first), 401, "invalid_client", "replayed");
        const byEndpoint = await post(await f.assertion(apiKey, { aud: `${server.baseUrl}${INTROSPECT}` }));
        expect(byEndpoint.json, byEndpoint.text).toMatchObject({ active: true });
        expectOAuthError(await post(await f.assertion(apiKey, { aud: "https://elsewhere.example" })), 401, "invalid_client", "wrong aud");
        expectOAuthError(await post(await f.assertion(apiKey, { aud: `${server.baseUrl}${TOKEN}` })), 401, "invalid_client", "token endpoint aud");
        expectOAuthError(await post(await f.assertion(apiKey, { exp: Math.floor(Date.now() / 1000) + 7200 })), 401, "invalid_client", "2h lifetime");
        expectOAuthError(await post(await f.assertion(apiKey, { exp: Math.floor(Date.now() / 1000) - 60 })), 401, "invalid_client", "expired");
        expectOAuthError(await post(await f.assertion(apiKey, { jti: undefined })), 401, "invalid_client", "no jti");
        expectOAuthError(await post(await f.assertion(apiKey, { iss: "someone-else" })), 401, "invalid_client", "iss differs");
        // Signed by another app's key, claiming to be this one.
        const other = await f.apiKeyApp(projectA);
        const foreign = await new SignJWT({
          iss: apiKey.clientId,
          sub: apiKey.clientId,
          aud: server.baseUrl,
          jti: randomBytes(8).toString("hex"),
          exp: Math.floor(Date.now() / 1000) + 60,
        })
          .setProtectedHeader({ alg: "ES256", kid: other.keyId })
          .sign(other.key);
        expectOAuthError(await post(foreign), 401, "invalid_client", "foreign key");
        // A basic app cannot authenticate by assertion, nor a key app by secret.
        expectOAuthError(
          await raw(server.baseUrl, INTROSPECT, { form: { token }, headers: { authorization: basic(apiKey.clientId, "anything") } }),
          401,
          "invalid_client",
          "key app by Basic",
        );
      });

      it("private_key_jwt: one assertion sent many times at once authenticates once", async () => {
        const assertion = await f.assertion(apiKey);
        const results = await Promise.all(
          Array.from({ length: 12 }, () =>
            raw(server.baseUrl, INTROSPECT, { form: { token, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion } }),
          ),
        );
        const statuses = results.map((r) => r.status);
        expect(
          statuses.filter((s) => s === 200),
          JSON.stringify(statuses),
        ).toHaveLength(1);
        expect(
          statuses.filter((s) => s === 401),
          JSON.stringify(statuses),
        ).toHaveLength(11);
      });

      it("a repeated parameter or two authentication mechanisms at once are 400 invalid_request", async () => {
        const auth = { authorization: basic(apiBasic.clientId, apiBasic.secret) };
        const twice = await raw(server.baseUrl, INTROSPECT, {
          body: `token=${encodeURIComponent(token)}&token=x`,
          headers: { ...auth, "content-type": "application/x-www-form-urlencoded" },
        });
        expectOAuthError(twice, 400, "invalid_request", "token twice");
        const both = await raw(server.baseUrl, INTROSPECT, {
          form: { token, client_assertion_type: ASSERTION_TYPE, client_assertion: await f.assertion(apiKey) },
          headers: auth,
        });
        expectOAuthError(both, 400, "invalid_request", "Basic and an assertion");
      });

      it("a missing token is 400 invalid_request; GET is refused without a 500; every answer is no-store", async () => {
        const missing = await raw(server.baseUrl, INTROSPECT, { form: {}, headers: { authorization: basic(apiBasic.clientId, apiBasic.secret) } });
        expectOAuthError(missing, 400, "invalid_request", "missing token");
        const get = await raw(server.baseUrl, `${INTROSPECT}?token=${encodeURIComponent(token)}`, {
          headers: { authorization: basic(apiBasic.clientId, apiBasic.secret) },
        });
        expect(get.status, get.text).toBeGreaterThanOrEqual(400);
        expect(get.status, get.text).toBeLessThan(500);
        expect(get.json?.error).toEqual(expect.any(String));
        expectNoStore(get, "GET");
        const json = await raw(server.baseUrl, INTROSPECT, {
          body: JSON.stringify({ token }),
          headers: { "content-type": "application/json", authorization: basic(apiBasic.clientId, apiBasic.secret) },
        });
        expectOAuthError(json, 400, "invalid_request", "JSON body");
        const active = await f.introspect(apiBasic, token);
        expect(active.json.active).toBe(true);
        expectNoStore(active, "active");
        expect(active.headers["content-type"]).toMatch(/^application\/json/);
      });
    });
  });

  describe("revocation", () => {
    it.each(FORMATS)(
      "of its own %s token by the machine user (openid-client): introspection inactive, userinfo 401, resource API 401 at once",
      async (format) => {
        const m = await f.machine({ jwt: format === "jwt" });
        const token = await f.token(m, `openid ${projectScope(projectA)} ${PLATFORM_SCOPE}`);
        const other = await f.token(m, `openid ${projectScope(projectA)} ${PLATFORM_SCOPE}`);
        // Warm every cache: the resource API's principal cache above all.
        for (const protocol of PROTOCOLS) ok(await f.getSelf(m, token, protocol));
        expect((await f.userinfo(token)).status).toBe(200);
        expect((await f.introspect(apiBasic, token)).json.active).toBe(true);

        await client.tokenRevocation(await f.machineConfig(m), token);

        expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
        const ui = await f.userinfo(token);
        expect(ui.status).toBe(401);
        expect(String(ui.headers["www-authenticate"])).toMatch(/^Bearer .*error="invalid_token"/);
        for (const protocol of PROTOCOLS) expectUnauthenticated(await f.getSelf(m, token, protocol), `${protocol} after revocation`);
        // Only that token: another one of the same user still works.
        expect((await f.introspect(apiBasic, other)).json.active).toBe(true);
        expect((await f.userinfo(other)).status).toBe(200);
        ok(await f.getSelf(m, other));
        // Revoking it again is fine (unknown now).
        expect((await f.revokeAs(m, token)).status).toBe(200);
      },
    );

    it.each(FORMATS)("of a %s token of another client: 400 unauthorized_client, and the token still works", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `openid ${projectScope(projectA)} ${PLATFORM_SCOPE}`);
      const stranger = await f.machine({ jwt: true });
      const byMachine = await f.revokeAs(stranger, token);
      expectOAuthError(byMachine, 400, "unauthorized_client", "another machine user");
      const byApp = await raw(server.baseUrl, REVOKE, { form: { token }, headers: { authorization: basic(apiBasic.clientId, apiBasic.secret) } });
      expectOAuthError(byApp, 400, "unauthorized_client", "an API app of the token's audience");
      const byKeyApp = await raw(server.baseUrl, REVOKE, {
        form: { token, client_assertion_type: ASSERTION_TYPE, client_assertion: await f.assertion(apiKey, { aud: `${server.baseUrl}${REVOKE}` }) },
      });
      expectOAuthError(byKeyApp, 400, "unauthorized_client", "a private_key_jwt app");
      await expect(client.tokenRevocation(await f.machineConfig(stranger), token)).rejects.toMatchObject({ error: "unauthorized_client" });
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
      expect((await f.userinfo(token)).status).toBe(200);
      ok(await f.getSelf(m, token));
    });

    it("of an unknown token: 200", async () => {
      const m = await f.machine();
      for (const token of ["garbage", "x".repeat(400), "a.b.c"]) {
        const r = await f.revokeAs(m, token);
        expect(r.status, r.text).toBe(200);
        expectNoStore(r);
      }
      await client.tokenRevocation(await f.machineConfig(m), "unknown");
    });

    it("by an OIDC app with auth NONE (client_id only) of a token not its own: 400 unauthorized_client", async () => {
      const none = await f.app(projectA, {
        oidc: { redirectUris: ["https://app.example/cb"], responseTypes: ["OIDC_RESPONSE_TYPE_CODE"], authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" },
      });
      expect(none.secret).toBeUndefined();
      const m = await f.machine({ jwt: true });
      const token = await f.token(m, `openid ${projectScope(projectA)}`);
      const r = await raw(server.baseUrl, REVOKE, { form: { token, client_id: none.clientId } });
      expectOAuthError(r, 400, "unauthorized_client");
      // An unknown token is still 200 for it.
      expect((await raw(server.baseUrl, REVOKE, { form: { token: "unknown", client_id: none.clientId } })).status).toBe(200);
      // None of the client_secret_basic app's tokens by client_id alone: its registered method is Basic.
      expectOAuthError(await raw(server.baseUrl, REVOKE, { form: { token, client_id: apiBasic.clientId } }), 401, "invalid_client", "basic app without secret");
      expect((await f.introspect(apiBasic, token)).json.active).toBe(true);
    });

    it("refuses bad client authentication and a missing token, never with a 500", async () => {
      const m = await f.machine();
      const token = await f.token(m, "openid");
      const wrong = await raw(server.baseUrl, REVOKE, { form: { token }, headers: { authorization: basic(m.username, "wrong") } });
      expectOAuthError(wrong, 401, "invalid_client", "wrong secret");
      expect(String(wrong.headers["www-authenticate"])).toMatch(/^Basic\b/);
      // client_secret_post by the machine user itself works at revocation.
      const post = await raw(server.baseUrl, REVOKE, { form: { token, client_id: m.username, client_secret: m.secret } });
      expect(post.status, post.text).toBe(200);
      expect((await f.userinfo(token)).status).toBe(401);
      expectOAuthError(
        await raw(server.baseUrl, REVOKE, { form: {}, headers: { authorization: basic(m.username, m.secret) } }),
        400,
        "invalid_request",
        "missing token",
      );
      const get = await raw(server.baseUrl, `${REVOKE}?token=x`, { headers: { authorization: basic(m.username, m.secret) } });
      expect(get.status).toBeGreaterThanOrEqual(400);
      expect(get.status).toBeLessThan(500);
    });
  });

  describe("tokens of the jwt-bearer grant", () => {
    it.each(FORMATS)(
      "a %s access token: introspected with client_id = user id, revoked by the machine user it acts for; its ID token is no access token",
      async (format) => {
        const m = await f.machine({ jwt: format === "jwt" });
        const file = JSON.parse(ok(await f.users.call("AddKey", { id: m.id, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } })).keyFile);
        const key = await importPKCS8(file.key, "ES256");
        const now = Math.floor(Date.now() / 1000);
        const assertion = await new SignJWT({ iss: m.id, sub: m.id, aud: server.baseUrl, jti: randomBytes(8).toString("hex"), iat: now, exp: now + 60 })
          .setProtectedHeader({ alg: "ES256", kid: file.keyId })
          .sign(key);
        const issued = await raw(server.baseUrl, TOKEN, {
          form: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion, scope: `openid profile ${projectScope(projectA)} ${PLATFORM_SCOPE}` },
        });
        expect(issued.status, issued.text).toBe(200);
        const token = issued.json.access_token as string;
        const idToken = issued.json.id_token as string;
        expect(idToken).toEqual(expect.any(String));
        expect((await f.introspect(apiBasic, token)).json).toMatchObject({
          active: true,
          client_id: m.id,
          sub: m.id,
          aud: [m.id, projectA, "platform"],
          username: m.loginName,
        });
        // An ID token is not an access token anywhere.
        expect((await f.introspect(apiBasic, idToken)).json).toEqual({ active: false });
        expect((await f.userinfo(idToken)).status).toBe(401);
        expectUnauthenticated(await f.getSelf(m, idToken, "rest"), "ID token at the resource API");
        // Another machine user may not revoke it; the machine user it acts for may (by its secret).
        expectOAuthError(await f.revokeAs(await f.machine(), token), 400, "unauthorized_client", "stranger");
        ok(await f.getSelf(m, token));
        const r = await f.revokeAs(m, token);
        expect(r.status, r.text).toBe(200);
        expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
        expect((await f.userinfo(token)).status).toBe(401);
        expectUnauthenticated(await f.getSelf(m, token, "connect"), "after revocation");
      },
    );
  });

  describe("userinfo", () => {
    it.each(FORMATS)("answers the claims of the %s token's scopes (openid-client, GET and POST)", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const config = await f.config(apiBasic);
      const bare = await client.fetchUserInfo(config, await f.token(m, "openid"), m.id);
      expect(bare).toEqual({ sub: m.id });

      const token = await f.token(m, "openid profile email phone");
      const org = ok(await f.orgs.call("GetOrganization", { id: server.defaultOrgId }, server.adminToken)).organization;
      const expected = {
        sub: m.id,
        name: `svc ${m.username}`,
        preferred_username: m.loginName,
        updated_at: expect.any(Number),
        "urn:platform:iam:user:resourceowner:id": server.defaultOrgId,
        "urn:platform:iam:user:resourceowner:name": org.name,
        "urn:platform:iam:user:resourceowner:primary_domain": org.primaryDomain,
      };
      expect(await client.fetchUserInfo(config, token, m.id)).toEqual(expected);
      const get = await f.userinfo(token, "GET");
      expect(get.status).toBe(200);
      expect(get.json).toEqual(expected);
      expectNoStore(get);
      const post = await f.userinfo(token, "POST");
      expect(post.status, post.text).toBe(200);
      expect(post.json).toEqual(expected);
      // The platform audience makes no difference here.
      expect((await f.userinfo(await f.token(m, `openid ${PLATFORM_SCOPE}`))).json).toEqual({ sub: m.id });
    });

    it("is 401 with WWW-Authenticate: Bearer without a token, and invalid_token for garbage or a revoked token", async () => {
      const none = await raw(server.baseUrl, USERINFO);
      expect(none.status).toBe(401);
      expect(String(none.headers["www-authenticate"])).toMatch(/^Bearer\b/);
      expect(String(none.headers["www-authenticate"])).not.toContain("error=");
      for (const header of ["Bearer garbage", "Bearer a.b.c", "Basic Zm9vOmJhcg==", "Bearer", `Bearer ${"x".repeat(9000)}`]) {
        const r = await raw(server.baseUrl, USERINFO, { headers: { authorization: header } });
        expect(r.status, header.slice(0, 20)).toBe(401);
        expect(String(r.headers["www-authenticate"]), header.slice(0, 20)).toMatch(/^Bearer .*error="invalid_token"/);
      }
      for (const format of FORMATS) {
        const m = await f.machine({ jwt: format === "jwt" });
        const token = await f.token(m, "openid");
        expect((await f.userinfo(token)).status).toBe(200);
        expect((await f.revokeAs(m, token)).status).toBe(200);
        for (const method of ["GET", "POST"] as const) {
          const r = await f.userinfo(token, method);
          expect(r.status, `${format} ${method}`).toBe(401);
          expect(String(r.headers["www-authenticate"])).toMatch(/^Bearer .*error="invalid_token"/);
          expect(r.json?.error).toBe("invalid_token");
        }
        await expect(client.fetchUserInfo(await f.config(apiBasic), token, m.id)).rejects.toThrow();
      }
    });

    it.each(FORMATS)("is 403 insufficient_scope for a %s token without openid", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `profile ${PLATFORM_SCOPE}`);
      for (const method of ["GET", "POST"] as const) {
        const r = await f.userinfo(token, method);
        expect(r.status, method).toBe(403);
        expect(String(r.headers["www-authenticate"])).toMatch(/^Bearer .*error="insufficient_scope"/);
        expect(r.json?.error).toBe("insufficient_scope");
      }
    });

    it("is 401 invalid_token while the user is locked or its organization deactivated", async () => {
      const org = await createOrg(server, uniqueName("UiOrg"));
      const m = await f.machine({ jwt: true, orgId: org.id });
      const token = await f.token(m, "openid profile");
      expect((await f.userinfo(token)).json).toMatchObject({
        sub: m.id,
        "urn:platform:iam:user:resourceowner:id": org.id,
        "urn:platform:iam:user:resourceowner:primary_domain": org.primary,
      });
      ok(await f.users.call("LockUser", { id: m.id }));
      expect((await f.userinfo(token)).status).toBe(401);
      ok(await f.users.call("UnlockUser", { id: m.id }));
      expect((await f.userinfo(token)).status).toBe(200);
      ok(await f.orgs.call("DeactivateOrganization", { id: org.id }, server.adminToken));
      const r = await f.userinfo(token);
      expect(r.status).toBe(401);
      expect(String(r.headers["www-authenticate"])).toMatch(/error="invalid_token"/);
    });

    it("allows a CORS preflight and a request from an arbitrary origin", async () => {
      const origin = "https://any-origin.example";
      const pre = await raw(server.baseUrl, USERINFO, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
      });
      expect(pre.status).toBeGreaterThanOrEqual(200);
      expect(pre.status).toBeLessThan(300);
      expect([origin, "*"]).toContain(pre.headers["access-control-allow-origin"]);
      expect(String(pre.headers["access-control-allow-methods"])).toMatch(/\bGET\b/);
      expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("authorization");
      const prePost = await raw(server.baseUrl, USERINFO, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      expect(prePost.status).toBeLessThan(300);
      expect(String(prePost.headers["access-control-allow-methods"])).toMatch(/\bPOST\b/);

      const m = await f.machine();
      const r = await raw(server.baseUrl, USERINFO, { headers: { ...bearer(await f.token(m, "openid")), origin } });
      expect(r.status).toBe(200);
      expect([origin, "*"]).toContain(r.headers["access-control-allow-origin"]);
    });
  });

  describe("resource APIs with access tokens", () => {
    let other: { instanceId: string; domain: string; adminToken: string };
    beforeAll(async () => {
      const domain = uniqueDomain("oidc-other");
      const made = await server.createInstance(domain);
      other = { instanceId: made.instanceId, domain, adminToken: made.adminToken };
    });

    it.each(FORMATS)("a %s token with the platform scope works on every protocol; without it 401; on another instance's host 401", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const platform = await f.token(m, `openid ${PLATFORM_SCOPE}`);
      const project = await f.token(m, `openid profile ${projectScope(projectA)}`);
      for (const protocol of PROTOCOLS) {
        const self = ok(await f.getSelf(m, platform, protocol));
        expect(self.user.details.id, protocol).toBe(m.id);
        expectUnauthenticated(await f.getSelf(m, project, protocol), `${protocol} without the platform audience`);
        expectUnauthenticated(
          await at(PlatformUsers, protocol, other.domain, server.service.port).call("GetUser", { id: m.id }, platform),
          `${protocol} on another instance`,
        );
        expectUnauthenticated(
          await at(PlatformUsers, protocol, other.domain, server.service.port).call("SearchUsers", {}, platform),
          `${protocol} search on another instance`,
        );
      }
      // Nor do the other instance's OIDC endpoints know the token.
      const ui = await raw(server.baseUrl, USERINFO, { host: other.domain, headers: bearer(platform) });
      expect(ui.status).toBe(401);
    });

    it.each(FORMATS)("a %s token of a user locked afterwards is refused within a request or two, on every protocol", async (format) => {
      const m = await f.machine({ jwt: format === "jwt" });
      const token = await f.token(m, `openid ${PLATFORM_SCOPE}`);
      for (const protocol of PROTOCOLS) ok(await f.getSelf(m, token, protocol));
      ok(await f.users.call("LockUser", { id: m.id }));
      for (const protocol of PROTOCOLS) {
        let result = await f.getSelf(m, token, protocol);
        if (result.ok) result = await f.getSelf(m, token, protocol);
        expectUnauthenticated(result, `${protocol} after locking`);
      }
    });

    it.each(FORMATS)("a %s token of a user whose organization is deactivated afterwards is refused within a request or two", async (format) => {
      const org = await createOrg(server, uniqueName("ResOrg"));
      const m = await f.machine({ jwt: format === "jwt", orgId: org.id });
      const token = await f.token(m, `openid ${PLATFORM_SCOPE}`);
      for (const protocol of PROTOCOLS) ok(await f.getSelf(m, token, protocol));
      ok(await f.orgs.call("DeactivateOrganization", { id: org.id }, server.adminToken));
      for (const protocol of PROTOCOLS) {
        let result = await f.getSelf(m, token, protocol);
        if (result.ok) result = await f.getSelf(m, token, protocol);
        expectUnauthenticated(result, `${protocol} after deactivating the organization`);
      }
    });

    it("a token of the other instance works on its own host and not on this one", async () => {
      const port = server.service.port;
      const users = at(PlatformUsers, "grpc", other.domain, port);
      const username = uniqueName("othersvc");
      const id = String(
        (await must(users.call("CreateUser", { user: machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }) }, other.adminToken), "create user"))
          .details.id,
      );
      const secret = String((await must(users.call("GenerateSecret", { id }, other.adminToken), "secret")).clientSecret);
      const t = await raw(server.baseUrl, TOKEN, {
        host: other.domain,
        form: { grant_type: "client_credentials", scope: `openid ${PLATFORM_SCOPE}` },
        headers: { authorization: basic(username, secret) },
      });
      expect(t.status, t.text).toBe(200);
      const token = t.json.access_token as string;
      expect(decodeJwt(token).iss).toBe(`http://${other.domain}:${port}`);
      for (const protocol of PROTOCOLS) {
        expect(ok(await at(PlatformUsers, protocol, other.domain, port).call("GetUser", { id }, token)).user.details.id, protocol).toBe(id);
        expectUnauthenticated(
          await protocolClient(PlatformUsers, protocol, server.baseUrl).call("GetUser", { id }, token),
          `${protocol} on the first instance`,
        );
      }
      expect((await raw(server.baseUrl, USERINFO, { headers: bearer(token) })).status).toBe(401);
      expect((await f.introspect(apiBasic, token)).json).toEqual({ active: false });
    });
  });

  describe("a blocked instance", () => {
    const ENDPOINTS: { method: string; path: string; form?: boolean }[] = [
      { method: "GET", path: "/.well-known/openid-configuration" },
      { method: "GET", path: "/oauth/v2/keys" },
      { method: "POST", path: TOKEN, form: true },
      { method: "POST", path: INTROSPECT, form: true },
      { method: "GET", path: USERINFO },
      { method: "POST", path: USERINFO, form: true },
      // Last: it ends the token the others use.
      { method: "POST", path: REVOKE, form: true },
    ];

    it("answers 429 at every OpenID Connect endpoint, never 500; an unknown host 404; unblocked, it works again", async () => {
      const port = server.service.port;
      const domain = uniqueDomain("oidc-blocked");
      const c = await server.createInstance(domain);
      const at_ = (service: DescService) => at(service, "grpc", domain, port);
      const username = uniqueName("blk");
      const userId = String(
        (await must(at_(PlatformUsers).call("CreateUser", { user: machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }) }, c.adminToken), "user"))
          .details.id,
      );
      const secret = String((await must(at_(PlatformUsers).call("GenerateSecret", { id: userId }, c.adminToken), "secret")).clientSecret);
      const projectId = String(
        (await must(at_(PlatformProjects).call("CreateProject", { project: { name: "blocked project" } }, c.adminToken), "project")).details.id,
      );
      const app = await must(at_(PlatformApps).call("CreateApp", { projectId, app: { name: "blocked app", api: {} } }, c.adminToken), "app");
      const appAuth = basic(String(app.clientId), String(app.clientSecret));
      const machineAuth = basic(username, secret);
      const issue = () =>
        raw(server.baseUrl, TOKEN, {
          host: domain,
          form: { grant_type: "client_credentials", scope: `openid ${projectScope(projectId)} ${PLATFORM_SCOPE}` },
          headers: { authorization: machineAuth },
        });
      const before = await issue();
      expect(before.status, before.text).toBe(200);
      const token = before.json.access_token as string;
      expect((await raw(server.baseUrl, INTROSPECT, { host: domain, form: { token }, headers: { authorization: appAuth } })).json).toMatchObject({
        active: true,
        sub: userId,
      });

      const call = (e: (typeof ENDPOINTS)[number], host: string) => {
        const auth = e.path === INTROSPECT ? appAuth : e.path === USERINFO ? `Bearer ${token}` : machineAuth;
        const form: Record<string, string> = e.path === TOKEN ? { grant_type: "client_credentials", scope: "openid" } : e.path === USERINFO ? {} : { token };
        return raw(server.baseUrl, e.path, { host, method: e.method, headers: { authorization: auth }, ...(e.form && { form }) });
      };

      const instances = at(PlatformInstances, "grpc", "localhost", port);
      await must(instances.call("Limit", { id: c.instanceId, limits: { block: true } }, server.adminToken), "block");
      try {
        for (const e of ENDPOINTS) {
          const r = await call(e, domain);
          expect(r.status, `${e.method} ${e.path}: ${r.text}`).toBe(429);
          // Without any credentials too.
          const bare = await raw(server.baseUrl, e.path, { host: domain, method: e.method, ...(e.form && { form: {} }) });
          expect(bare.status, `${e.method} ${e.path} without credentials: ${bare.text}`).toBe(429);
          const unknown = await call(e, uniqueDomain("nobody"));
          expect(unknown.status, `${e.method} ${e.path} on an unknown host: ${unknown.text}`).toBe(404);
        }
        // The token is refused by the resource APIs as well, and the other instances are not affected.
        expect(await at(PlatformUsers, "rest", domain, port).call("GetUser", { id: userId }, token)).toMatchObject({ ok: false, httpStatus: 429 });
        expect((await raw(server.baseUrl, "/.well-known/openid-configuration")).status).toBe(200);
      } finally {
        await must(instances.call("Limit", { id: c.instanceId, limits: { block: false } }, server.adminToken), "unblock");
      }

      for (const e of ENDPOINTS) {
        const r = await call(e, domain);
        expect(r.status, `${e.method} ${e.path} after unblocking: ${r.text}`).toBe(200);
      }
      // The token was revoked by the last call; a fresh one works everywhere.
      expect((await raw(server.baseUrl, USERINFO, { host: domain, headers: bearer(token) })).status).toBe(401);
      const again = await issue();
      expect(again.status).toBe(200);
      const fresh = again.json.access_token as string;
      expect((await raw(server.baseUrl, INTROSPECT, { host: domain, form: { token: fresh }, headers: { authorization: appAuth } })).json).toMatchObject({
        active: true,
        sub: userId,
      });
      expect((await raw(server.baseUrl, USERINFO, { host: domain, headers: bearer(fresh) })).json).toEqual({ sub: userId });
      expect(ok(await at(PlatformUsers, "connect", domain, port).call("GetUser", { id: userId }, fresh)).user.details.id).toBe(userId);
    });
  });
});

describe.each(DATABASE_KINDS)("expired access tokens (%s)", (kind) => {
  let server: TestServer;
  let f: Fixture;
  let projectId: string;
  let app: App & { secret: string };

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_OIDC_ACCESS_TOKEN_TTL: "2s" });
    f = new Fixture(server);
    projectId = await f.project();
    app = await f.apiBasicApp(projectId);
  });
  afterAll(() => server?.close());

  it("are inactive at introspection, 401 invalid_token at userinfo and 401 at the resource APIs; revoking one is 200", async () => {
    const made: { format: Format; m: Machine; token: string }[] = [];
    for (const format of FORMATS) {
      const m = await f.machine({ jwt: format === "jwt" });
      made.push({ format, m, token: await f.token(m, `openid ${projectScope(projectId)} ${PLATFORM_SCOPE}`) });
    }
    for (const { format, m, token } of made) {
      const r = await f.introspect(app, token);
      expect(r.json, format).toMatchObject({ active: true });
      expect(r.json.exp - r.json.iat).toBe(2);
      ok(await f.getSelf(m, token, "grpc"));
      expect((await f.userinfo(token)).status).toBe(200);
    }
    await sleep(3_200);
    for (const { format, m, token } of made) {
      expect((await f.introspect(app, token)).json, format).toEqual({ active: false });
      const ui = await f.userinfo(token);
      expect(ui.status, format).toBe(401);
      expect(String(ui.headers["www-authenticate"])).toMatch(/^Bearer .*error="invalid_token"/);
      for (const protocol of PROTOCOLS) expectUnauthenticated(await f.getSelf(m, token, protocol), `${format} ${protocol}`);
      expect((await f.revokeAs(m, token)).status).toBe(200);
    }
  });
});
