import { createHash, createPrivateKey, randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { Code } from "@connectrpc/connect";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importPKCS8, jwtVerify, SignJWT, type JWTPayload } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createProject, projectClient } from "../projects/helpers.js";
import { langs, languageClient, SUPPORTED } from "../settings/helpers.js";
import { createOrg, DAY_MS, fromNow, humanUser, machineUser, ok, uniqueName, Users } from "../users/helpers.js";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const projectScope = (id: string) => `urn:platform:iam:org:project:id:${id}:aud`;
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const insecure = { execute: [client.allowInsecureRequests] };

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A raw form POST to the token endpoint, for exact statuses and bodies. */
async function tokenRequest(baseUrl: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${baseUrl}/oauth/v2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, headers: res.headers, body };
}

/** A GET with an arbitrary Host header (fetch sets Host from the URL). */
function getWithHost(baseUrl: string, path: string, host: string): Promise<{ status: number; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: url.port, path, method: "GET", headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const jwksOf = (baseUrl: string) => createRemoteJWKSet(new URL(`${baseUrl}/oauth/v2/keys`), { cooldownDuration: 0, cacheMaxAge: 0 });

async function fetchJwks(baseUrl: string): Promise<{ res: Response; keys: Record<string, unknown>[] }> {
  const res = await fetch(`${baseUrl}/oauth/v2/keys`);
  const json = (await res.json()) as { keys: Record<string, unknown>[] };
  return { res, keys: json.keys };
}

/** Verifies a JWT access token as a resource server would: against the JWKS, typ at+jwt. */
async function verifyAccessToken(baseUrl: string, token: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, jwksOf(baseUrl), { issuer: baseUrl, typ: "at+jwt" });
  return payload;
}

interface KeyFile {
  type: string;
  keyId: string;
  key: string;
  userId: string;
}

interface AssertionOptions {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  jti?: string | null;
  kid?: string | null;
}

/** An RFC 7523 assertion signed with the key file's private key. */
async function assertion(keyFile: KeyFile, baseUrl: string, o: AssertionOptions = {}): Promise<string> {
  const alg = createPrivateKey(keyFile.key).asymmetricKeyType === "ec" ? "ES256" : "RS256";
  const key = await importPKCS8(keyFile.key, alg);
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...(o.jti !== null && { jti: o.jti ?? randomUUID() }) })
    .setProtectedHeader({ alg, ...(o.kid !== null && { kid: o.kid ?? keyFile.keyId }) })
    .setIssuer(o.iss ?? keyFile.userId)
    .setSubject(o.sub ?? keyFile.userId)
    .setAudience(o.aud ?? baseUrl)
    .setIssuedAt(o.iat ?? now)
    .setExpirationTime(o.exp ?? now + 300);
  return jwt.sign(key);
}

/** An unsigned JWT (alg none). */
function unsignedJwt(payload: Record<string, unknown>): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`;
}

function expectOAuthError(a: Answer, status: number, error: string) {
  expect({ status: a.status, error: a.body?.error }, JSON.stringify(a.body)).toEqual({ status, error });
  expect(typeof a.body.error_description === "string" || a.body.error_description === undefined).toBe(true);
  expect(a.headers.get("content-type") ?? "").toMatch(/application\/json/);
  expect(a.headers.get("cache-control") ?? "").toMatch(/no-store/);
}

describe.each(DATABASE_KINDS)("machine grants of the OpenID provider (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let base: string;
  const TTL_S = 1200;

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_OIDC_ACCESS_TOKEN_TTL: "20m" });
    users = new Users(server);
    base = server.baseUrl;
    other = await server.createInstance("127.0.0.1");
  });
  afterAll(() => server?.close());

  /** A machine user with a client secret; JWT access tokens unless `opaque`. */
  async function machineWithSecret(opts: { opaque?: boolean; orgId?: string } = {}) {
    const username = uniqueName("svc");
    const id = await users.create(
      machineUser(username, opts.opaque ? {} : { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }),
      opts.orgId ? { orgId: opts.orgId } : undefined,
    );
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    expect(secret).toBeTruthy();
    return { id, username, secret };
  }

  async function addKey(id: string, type: "KEY_TYPE_RSA" | "KEY_TYPE_EC", expirationDate = fromNow(DAY_MS)): Promise<KeyFile & { raw: string }> {
    const m = ok(await users.call("AddKey", { id, key: { generate: type, expirationDate } }));
    const file = JSON.parse(m.keyFile as string) as KeyFile;
    return Object.assign(file, { raw: m.keyFile as string });
  }

  /** A machine user with one key; JWT access tokens unless `opaque`. */
  async function machineWithKey(type: "KEY_TYPE_RSA" | "KEY_TYPE_EC" = "KEY_TYPE_RSA", opts: { opaque?: boolean } = {}) {
    const username = uniqueName("jwt");
    const id = await users.create(machineUser(username, opts.opaque ? {} : { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    const key = await addKey(id, type);
    return { id, username, key };
  }

  const credentials = (username: string, secret: string, scope = PLATFORM_SCOPE) =>
    tokenRequest(base, { grant_type: "client_credentials", scope }, { authorization: basic(username, secret) });
  const jwtBearer = (assertionValue: string, scope = PLATFORM_SCOPE, url = base) =>
    tokenRequest(url, { grant_type: JWT_BEARER, assertion: assertionValue, scope });

  const getUser = (baseUrl: string, token: string, id: string, protocol: Protocol = "rest") =>
    protocolClient(PlatformUsers, protocol, baseUrl).call("GetUser", { id }, token);

  describe("discovery", () => {
    it("names this issuer and the endpoints at the spec's paths", async () => {
      const res = await fetch(`${base}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc).toMatchObject({
        issuer: base,
        token_endpoint: `${base}/oauth/v2/token`,
        jwks_uri: `${base}/oauth/v2/keys`,
        userinfo_endpoint: `${base}/oidc/v1/userinfo`,
        introspection_endpoint: `${base}/oauth/v2/introspect`,
        revocation_endpoint: `${base}/oauth/v2/revoke`,
      });
      expect(doc.grant_types_supported).toEqual(expect.arrayContaining(["client_credentials", JWT_BEARER]));
      expect(doc.grant_types_supported).not.toContain("password");
      expect(doc.id_token_signing_alg_values_supported).toContain("RS256");
      expect(doc.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]));

      // A certified relying party accepts it.
      const config = await client.discovery(new URL(base), "anyone", undefined, client.None(), insecure);
      expect(config.serverMetadata().issuer).toBe(base);
      expect(config.serverMetadata().token_endpoint).toBe(`${base}/oauth/v2/token`);
    });

    it("advertises the authorization and end-session endpoints exactly when they are served, and no OAuth metadata document", async () => {
      const doc = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      const authorize = await fetch(`${base}/oauth/v2/authorize?client_id=x&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Frp.example%2Fcb`, {
        redirect: "manual",
      });
      await authorize.arrayBuffer();
      const endSession = await fetch(`${base}/oidc/v1/end_session`, { redirect: "manual" });
      await endSession.arrayBuffer();
      // As built for the machine grants neither endpoint is served, and discovery must say so;
      // once the login pages serve them, discovery must name them at the spec's paths.
      if (authorize.status === 404) {
        expect(doc).not.toHaveProperty("authorization_endpoint");
        expect(doc.response_types_supported).toEqual([]);
        expect(doc.grant_types_supported).toEqual(["client_credentials", JWT_BEARER]);
        expect(doc).not.toHaveProperty("response_modes_supported");
      } else {
        expect(authorize.status).toBeLessThan(500);
        expect(doc.authorization_endpoint).toBe(`${base}/oauth/v2/authorize`);
        expect((doc.response_types_supported as string[]).length).toBeGreaterThan(0);
      }
      if (endSession.status === 404) expect(doc).not.toHaveProperty("end_session_endpoint");
      else expect(doc.end_session_endpoint).toBe(`${base}/oidc/v1/end_session`);

      const oauthMetadata = await fetch(`${base}/.well-known/oauth-authorization-server`);
      expect(oauthMetadata.status).toBe(404);
      await oauthMetadata.arrayBuffer();
    });

    it("lists the instance's languages as ui_locales_supported: all when unrestricted, the restricted ones in order, all again after a reset", async () => {
      const languages = languageClient(server, "rest");
      const uiLocales = async (url = base) =>
        ((await (await fetch(`${url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>).ui_locales_supported;
      const restrict = async (keys: string[]) =>
        ok(await languages.set({ restrictedLanguages: { languages: langs(...keys) } }, { instanceId: server.instanceId }, server.adminToken));
      expect(await uiLocales()).toEqual(SUPPORTED);
      await restrict(["fr", "en"]);
      expect(await uiLocales()).toEqual(["fr", "en"]);
      // Discovery is per instance: another one keeps its own.
      expect(await uiLocales(other.baseUrl)).toEqual(SUPPORTED);
      await restrict([]);
      expect(await uiLocales()).toEqual(SUPPORTED);
    });

    it("is not served for a host no instance has", async () => {
      const unknown = await getWithHost(base, "/.well-known/openid-configuration", "nobody.example");
      expect(unknown.status).toBe(404);
      expect(unknown.body).not.toContain("issuer");
      const keys = await getWithHost(base, "/oauth/v2/keys", "nobody.example");
      expect(keys.status).toBe(404);
      // The known host, spelled with upper case letters, is the same issuer.
      const known = await getWithHost(base, "/.well-known/openid-configuration", `LOCALHOST:${new URL(base).port}`);
      expect(known.status).toBe(200);
      expect(JSON.parse(known.body).issuer).toBe(base);
    });

    it("gives another instance its own issuer and its own keys", async () => {
      const res = await fetch(`${other.baseUrl}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc.issuer).toBe(other.baseUrl);
      expect(doc.token_endpoint).toBe(`${other.baseUrl}/oauth/v2/token`);
      expect(doc.jwks_uri).toBe(`${other.baseUrl}/oauth/v2/keys`);
      const mine = (await fetchJwks(base)).keys.map((k) => k.kid);
      const theirs = (await fetchJwks(other.baseUrl)).keys.map((k) => k.kid);
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.filter((k) => mine.includes(k))).toEqual([]);
    });
  });

  describe("JWKS", () => {
    it("is cacheable for the configured time and publishes public keys only", async () => {
      const { res, keys } = await fetchJwks(base);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      expect(res.headers.get("content-type")).toMatch(/application\/(jwk-set\+)?json/);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: expect.any(String) });
        for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
      }
      expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    });
  });

  describe("client_credentials", () => {
    it("issues a JWT access token through openid-client with client_secret_basic", async () => {
      const { id, username, secret } = await machineWithSecret();
      const config = await client.discovery(new URL(base), username, secret, client.ClientSecretBasic(secret), insecure);
      const before = Math.floor(Date.now() / 1000);
      const tokens = await client.clientCredentialsGrant(config, { scope: `openid ${PLATFORM_SCOPE}` });
      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.expires_in).toBe(TTL_S);
      expect(tokens.scope).toBe(`openid ${PLATFORM_SCOPE}`);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.id_token).toBeUndefined();

      expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: "at+jwt", alg: "RS256" });
      const claims = await verifyAccessToken(base, tokens.access_token);
      expect(claims).toMatchObject({ iss: base, sub: id, client_id: username, aud: [username, "platform"], scope: `openid ${PLATFORM_SCOPE}` });
      expect(claims.exp! - claims.iat!).toBe(TTL_S);
      expect(claims.iat!).toBeGreaterThanOrEqual(before - 1);
      expect(claims.iat!).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
      expect(typeof claims.jti).toBe("string");
      const kids = (await fetchJwks(base)).keys.map((k) => k.kid);
      expect(kids).toContain(decodeProtectedHeader(tokens.access_token).kid);
    });

    it("accepts client_secret_post as well, and the raw Basic header", async () => {
      const { id, username, secret } = await machineWithSecret();
      const config = await client.discovery(new URL(base), username, secret, client.ClientSecretPost(secret), insecure);
      const tokens = await client.clientCredentialsGrant(config, { scope: PLATFORM_SCOPE });
      expect((await verifyAccessToken(base, tokens.access_token)).sub).toBe(id);

      const raw = await tokenRequest(base, { grant_type: "client_credentials", client_id: username, client_secret: secret, scope: PLATFORM_SCOPE });
      expect(raw.status, JSON.stringify(raw.body)).toBe(200);
      expect(Object.keys(raw.body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
      expect(raw.body).toMatchObject({ token_type: "Bearer", expires_in: TTL_S, scope: PLATFORM_SCOPE });
      expect(raw.headers.get("cache-control")).toMatch(/no-store/);
      const viaBasic = await credentials(username, secret);
      expect(viaBasic.status).toBe(200);
    });

    it("issues an opaque access token to a machine user with bearer tokens", async () => {
      const { id, username, secret } = await machineWithSecret({ opaque: true });
      const config = await client.discovery(new URL(base), username, secret, client.ClientSecretBasic(secret), insecure);
      const tokens = await client.clientCredentialsGrant(config, { scope: PLATFORM_SCOPE });
      expect(tokens.access_token.split(".").length).not.toBe(3);
      expect(() => decodeJwt(tokens.access_token)).toThrow();
      expect(tokens.expires_in).toBe(TTL_S);
      expect(tokens.scope).toBe(PLATFORM_SCOPE);
      // The opaque token is still the user's.
      const got = await getUser(base, tokens.access_token, id);
      expect(ok(got).user.details.id).toBe(id);
    });

    it("drops unknown scopes and offline_access, never issuing a refresh token", async () => {
      const { username, secret } = await machineWithSecret();
      const res = await credentials(
        username,
        secret,
        `openid unknown:scope offline_access profile urn:platform:iam:org:project:role:reader ${PLATFORM_SCOPE} openid`,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const granted = (res.body.scope as string).split(" ");
      expect(granted).not.toContain("unknown:scope");
      expect(granted).not.toContain("offline_access");
      expect(granted).toEqual(expect.arrayContaining(["openid", "profile", PLATFORM_SCOPE]));
      expect(new Set(granted).size).toBe(granted.length);
      expect(res.body.refresh_token).toBeUndefined();
      expect(res.body.id_token).toBeUndefined();
      const claims = await verifyAccessToken(base, res.body.access_token);
      expect(claims.scope).toBe(res.body.scope);
    });

    it("with no scope asked, grants none and the audience is the client alone", async () => {
      const { username, secret } = await machineWithSecret();
      const res = await tokenRequest(base, { grant_type: "client_credentials" }, { authorization: basic(username, secret) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const claims = await verifyAccessToken(base, res.body.access_token);
      expect(claims.aud).toEqual([username]);
      expect(res.body.scope ?? "").toBe("");
    });

    it("adds an existing project to the audience, and drops the scope of a missing one", async () => {
      const projects = projectClient(base, server.adminToken);
      const projectId = await createProject(projects, uniqueName("Audience project"));
      const foreign = await createProject(projectClient(other.baseUrl, other.adminToken), uniqueName("Foreign project"));
      const { username, secret } = await machineWithSecret();

      const withProject = await credentials(username, secret, `${projectScope(projectId)} ${PLATFORM_SCOPE}`);
      expect(withProject.status, JSON.stringify(withProject.body)).toBe(200);
      expect(withProject.body.scope.split(" ").sort()).toEqual([projectScope(projectId), PLATFORM_SCOPE].sort());
      const claims = await verifyAccessToken(base, withProject.body.access_token);
      expect(claims.aud).toEqual([username, projectId, "platform"]);

      for (const missing of ["012345678901234567", foreign]) {
        const res = await credentials(username, secret, `openid ${projectScope(missing)}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.scope).toBe("openid");
        expect((await verifyAccessToken(base, res.body.access_token)).aud).toEqual([username]);
      }
    });

    it("refuses a wrong or missing secret, an unknown client, and a replaced or removed secret with invalid_client", async () => {
      const { id, username, secret } = await machineWithSecret();
      const wrong = await credentials(username, `${secret}x`);
      expectOAuthError(wrong, 401, "invalid_client");
      expect(wrong.headers.get("www-authenticate") ?? "").toMatch(/^Basic/i);
      expectOAuthError(await credentials(uniqueName("nobody"), secret), 401, "invalid_client");
      expectOAuthError(await tokenRequest(base, { grant_type: "client_credentials", client_id: username, client_secret: `${secret}x` }), 401, "invalid_client");
      // Without any secret: oidc-provider answers invalid_request (RFC 6749 section 5.2 would say invalid_client).
      const noSecret: Record<string, string>[] = [{ grant_type: "client_credentials", client_id: username }, { grant_type: "client_credentials" }];
      for (const form of noSecret) {
        const none = await tokenRequest(base, form);
        expect([400, 401], JSON.stringify(none.body)).toContain(none.status);
        expect(["invalid_client", "invalid_request"]).toContain(none.body.error);
        expect(none.body.access_token).toBeUndefined();
      }

      const renewed = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
      expectOAuthError(await credentials(username, secret), 401, "invalid_client");
      expect((await credentials(username, renewed)).status).toBe(200);
      ok(await users.call("RemoveSecret", { id }));
      expectOAuthError(await credentials(username, renewed), 401, "invalid_client");
    });

    it("refuses private_key_jwt client authentication with invalid_client", async () => {
      const { id, username, secret } = await machineWithSecret();
      const key = await addKey(id, "KEY_TYPE_RSA");
      const tokenUrl = `${base}/oauth/v2/token`;
      for (const clientId of [username, id]) {
        const clientAssertion = await assertion(key, base, { iss: clientId, sub: clientId, aud: tokenUrl });
        const res = await tokenRequest(base, {
          grant_type: "client_credentials",
          client_id: clientId,
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: clientAssertion,
          scope: PLATFORM_SCOPE,
        });
        expectOAuthError(res, 401, "invalid_client");
      }
      // Through openid-client too.
      const config = await client.discovery(
        new URL(base),
        username,
        undefined,
        client.PrivateKeyJwt({ key: await importPKCS8(key.key, "RS256"), kid: key.keyId }),
        insecure,
      );
      await expect(client.clientCredentialsGrant(config, { scope: PLATFORM_SCOPE })).rejects.toMatchObject({ error: "invalid_client", status: 401 });
      // The secret still works.
      expect((await credentials(username, secret)).status).toBe(200);
    });

    it("refuses a machine user without a secret and a human user with invalid_client", async () => {
      const username = uniqueName("nosecret");
      await users.create(machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
      expectOAuthError(await credentials(username, "whatever-secret"), 401, "invalid_client");
      const empty = await credentials(username, "");
      expect(["invalid_client", "invalid_request"], JSON.stringify(empty.body)).toContain(empty.body.error);

      const person = uniqueName("person");
      await users.create(humanUser(person, { password: "Human#Pass1" }));
      expectOAuthError(await credentials(person, "Human#Pass1"), 401, "invalid_client");
    });

    it("refuses locked and deactivated users, and users of a deactivated organization; their tokens stop working", async () => {
      const locked = await machineWithSecret();
      const lockedToken = (await credentials(locked.username, locked.secret)).body.access_token as string;
      ok(await getUser(base, lockedToken, locked.id));
      ok(await users.call("LockUser", { id: locked.id }));
      expectOAuthError(await credentials(locked.username, locked.secret), 401, "invalid_client");
      expect((await getUser(base, lockedToken, locked.id)).httpStatus).toBe(401);
      ok(await users.call("UnlockUser", { id: locked.id }));
      expect((await credentials(locked.username, locked.secret)).status).toBe(200);

      const deactivated = await machineWithSecret({ opaque: true });
      ok(await users.call("DeactivateUser", { id: deactivated.id }));
      expectOAuthError(await credentials(deactivated.username, deactivated.secret), 401, "invalid_client");

      const org = await createOrg(server, uniqueName("Org"));
      const inOrg = await machineWithSecret({ orgId: org.id });
      const orgToken = (await credentials(inOrg.username, inOrg.secret)).body.access_token as string;
      ok(await getUser(base, orgToken, inOrg.id));
      ok(await protocolClient(PlatformOrganizations, "grpc", base).call("DeactivateOrganization", { id: org.id }, server.adminToken));
      expectOAuthError(await credentials(inOrg.username, inOrg.secret), 401, "invalid_client");
      expect((await getUser(base, orgToken, inOrg.id)).httpStatus).toBe(401);
    });

    it("is refused for another instance's user, and answers unsupported grant types", async () => {
      const { username, secret } = await machineWithSecret();
      expectOAuthError(
        await tokenRequest(other.baseUrl, { grant_type: "client_credentials", scope: PLATFORM_SCOPE }, { authorization: basic(username, secret) }),
        401,
        "invalid_client",
      );

      for (const grant of ["password", "urn:ietf:params:oauth:grant-type:device_code", "nonsense"]) {
        const res = await tokenRequest(
          base,
          { grant_type: grant, username, password: secret, scope: PLATFORM_SCOPE },
          { authorization: basic(username, secret) },
        );
        expectOAuthError(res, 400, "unsupported_grant_type");
      }
      // Token exchange is served, for applications only (test/oidc/token-exchange.test.ts).
      const exchange = await tokenRequest(
        base,
        {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: "x",
          subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
        },
        { authorization: basic(username, secret) },
      );
      expectOAuthError(exchange, 400, "unauthorized_client");
      const missing = await tokenRequest(base, { scope: PLATFORM_SCOPE }, { authorization: basic(username, secret) });
      expectOAuthError(missing, 400, "invalid_request");
      // A refresh token or code grant for a client that may only use client_credentials.
      const forms: Record<string, string>[] = [
        { grant_type: "refresh_token", refresh_token: "abc" },
        { grant_type: "authorization_code", code: "abc", redirect_uri: "https://rp.example/cb" },
      ];
      for (const form of forms) {
        const res = await tokenRequest(base, form, { authorization: basic(username, secret) });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(["unsupported_grant_type", "unauthorized_client", "invalid_grant"]).toContain(res.body.error);
      }
      const get = await fetch(`${base}/oauth/v2/token`);
      expect(get.status).toBeGreaterThanOrEqual(400);
      expect(get.status).toBeLessThan(500);
      await get.arrayBuffer();
    });
  });

  describe("jwt-bearer", () => {
    it.each(["KEY_TYPE_RSA", "KEY_TYPE_EC"] as const)("issues an access token for an assertion signed with a %s key, through openid-client", async (type) => {
      const { id, username, key } = await machineWithKey(type);
      expect(key).toMatchObject({ type: "serviceaccount", userId: id, keyId: expect.any(String) });
      expect(key.key).toContain("BEGIN PRIVATE KEY");
      const config = await client.discovery(new URL(base), id, undefined, client.None(), insecure);
      const tokens = await client.genericGrantRequest(config, JWT_BEARER, { assertion: await assertion(key, base), scope: PLATFORM_SCOPE });
      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.expires_in).toBe(TTL_S);
      expect(tokens.scope).toBe(PLATFORM_SCOPE);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.id_token).toBeUndefined();
      const claims = await verifyAccessToken(base, tokens.access_token);
      expect(claims).toMatchObject({ iss: base, sub: id, client_id: id, aud: [id, "platform"], scope: PLATFORM_SCOPE });
      expect(claims.exp! - claims.iat!).toBe(TTL_S);
      expect(username).toBeTruthy();
      // The token endpoint URL is an accepted audience as well, and no client_id is needed.
      const raw = await jwtBearer(await assertion(key, base, { aud: `${base}/oauth/v2/token` }));
      expect(raw.status, JSON.stringify(raw.body)).toBe(200);
      expect(Object.keys(raw.body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
      const both = await jwtBearer(await assertion(key, base, { aud: ["https://elsewhere.example", base] }));
      expect(both.status, JSON.stringify(both.body)).toBe(200);
    });

    it("issues an opaque access token to a machine user with bearer tokens", async () => {
      const { id, key } = await machineWithKey("KEY_TYPE_EC", { opaque: true });
      const res = await jwtBearer(await assertion(key, base));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(() => decodeJwt(res.body.access_token)).toThrow();
      expect(ok(await getUser(base, res.body.access_token, id)).user.details.id).toBe(id);
    });

    it("returns an ID token for the scope openid, without profile claims", async () => {
      const { id, key } = await machineWithKey("KEY_TYPE_RSA");
      const config = await client.discovery(new URL(base), id, undefined, client.None(), insecure);
      const tokens = await client.genericGrantRequest(config, JWT_BEARER, {
        assertion: await assertion(key, base),
        scope: `openid profile email ${PLATFORM_SCOPE}`,
      });
      expect(tokens.id_token).toBeTruthy();
      const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, jwksOf(base), { issuer: base, audience: id });
      expect(protectedHeader.alg).toBe("RS256");
      expect(payload.sub).toBe(id);
      expect(payload.aud === id || (Array.isArray(payload.aud) && payload.aud.length === 1 && payload.aud[0] === id)).toBe(true);
      for (const claim of ["name", "preferred_username", "email", "updated_at", "urn:platform:iam:user:resourceowner:id"])
        expect(payload, claim).not.toHaveProperty(claim);
      const digest = createHash("sha256").update(tokens.access_token).digest();
      expect(payload.at_hash).toBe(digest.subarray(0, digest.length / 2).toString("base64url"));
      expect(tokens.claims()?.sub).toBe(id);
      // An ID token is no access token.
      expect((await getUser(base, tokens.id_token!, id)).httpStatus).toBe(401);
      expect(ok(await getUser(base, tokens.access_token, id)).user.details.id).toBe(id);
    });

    describe("refusals", () => {
      let subject: Awaited<ReturnType<typeof machineWithKey>>;
      let second: KeyFile;
      beforeAll(async () => {
        subject = await machineWithKey("KEY_TYPE_RSA");
        second = await addKey(subject.id, "KEY_TYPE_EC");
      });

      const refused = async (a: Answer, error = "invalid_grant", status = 400) => {
        expect(a.status).toBeLessThan(500);
        expectOAuthError(a, status, error);
      };

      it("refuses a wrong audience", async () => {
        for (const aud of ["https://elsewhere.example", other.baseUrl, `${base}/oauth/v2/introspect`, `${base}/`]) {
          await refused(await jwtBearer(await assertion(subject.key, base, { aud })));
        }
      });

      it("refuses a wrong issuer or subject", async () => {
        const other = await machineWithKey("KEY_TYPE_RSA");
        await refused(await jwtBearer(await assertion(subject.key, base, { iss: other.id })));
        await refused(await jwtBearer(await assertion(subject.key, base, { sub: other.id })));
        await refused(await jwtBearer(await assertion(subject.key, base, { iss: other.id, sub: other.id })));
        // A subject that is no user at all.
        for (const nobody of ["01a00000-0000-7000-8000-000000000000", "not an id", "x".repeat(300)]) {
          await refused(await jwtBearer(await assertion(subject.key, base, { iss: nobody, sub: nobody })));
        }
      });

      it("refuses an expired assertion and one valid for more than an hour", async () => {
        const now = Math.floor(Date.now() / 1000);
        await refused(await jwtBearer(await assertion(subject.key, base, { iat: now - 600, exp: now - 60 })));
        await refused(await jwtBearer(await assertion(subject.key, base, { exp: now + 2 * 3600 })));
        await refused(await jwtBearer(await assertion(subject.key, base, { exp: now + 3600 + 120 })));
        // Just within the hour is fine.
        const fine = await jwtBearer(await assertion(subject.key, base, { exp: now + 3500 }));
        expect(fine.status, JSON.stringify(fine.body)).toBe(200);
      });

      it("refuses an assertion without exp", async () => {
        const key = await importPKCS8(subject.key.key, "RS256");
        const noExp = await new SignJWT({ jti: randomUUID() })
          .setProtectedHeader({ alg: "RS256", kid: subject.key.keyId })
          .setIssuer(subject.id)
          .setSubject(subject.id)
          .setAudience(base)
          .setIssuedAt()
          .sign(key);
        await refused(await jwtBearer(noExp));
      });

      it("refuses a replayed jti", async () => {
        const jti = randomUUID();
        const first = await jwtBearer(await assertion(subject.key, base, { jti }));
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        await refused(await jwtBearer(await assertion(subject.key, base, { jti })));
        // The same assertion twice, too.
        const once = await assertion(second, base);
        expect((await jwtBearer(once)).status).toBe(200);
        await refused(await jwtBearer(once));
      });

      it("refuses an assertion signed with another user's key", async () => {
        const stranger = await machineWithKey("KEY_TYPE_RSA");
        // Their key under its own kid, and under the subject's kid.
        await refused(await jwtBearer(await assertion(stranger.key, base, { iss: subject.id, sub: subject.id })));
        await refused(await jwtBearer(await assertion(stranger.key, base, { iss: subject.id, sub: subject.id, kid: subject.key.keyId })));
        await refused(await jwtBearer(await assertion(stranger.key, base, { iss: subject.id, sub: subject.id, kid: null })));
      });

      it("refuses a deleted key, and a user whose only key was deleted", async () => {
        const user = await machineWithKey("KEY_TYPE_RSA");
        const extra = await addKey(user.id, "KEY_TYPE_EC");
        expect((await jwtBearer(await assertion(extra, base))).status).toBe(200);
        ok(await users.call("DeleteKey", { id: user.id, keyId: extra.keyId }));
        await refused(await jwtBearer(await assertion(extra, base)));
        expect((await jwtBearer(await assertion(user.key, base))).status).toBe(200);
        ok(await users.call("DeleteKey", { id: user.id, keyId: user.key.keyId }));
        await refused(await jwtBearer(await assertion(user.key, base)));
      });

      it("refuses an expired key", async () => {
        const user = await machineWithKey("KEY_TYPE_EC");
        const live = await addKey(user.id, "KEY_TYPE_RSA");
        expect((await jwtBearer(await assertion(user.key, base))).status).toBe(200);
        await server.service.store.db
          .updateTable("user_keys")
          .set({ expires_at: new Date(Date.now() - 1000) })
          .where("id", "=", user.key.keyId)
          .execute();
        await refused(await jwtBearer(await assertion(user.key, base)));
        expect((await jwtBearer(await assertion(live, base))).status).toBe(200);
        await server.service.store.db
          .updateTable("user_keys")
          .set({ expires_at: new Date(Date.now() - 1000) })
          .where("id", "=", live.keyId)
          .execute();
        await refused(await jwtBearer(await assertion(live, base)));
      });

      it("refuses a human user, and a locked machine user", async () => {
        const person = await users.create(humanUser(uniqueName("human"), { password: "Human#Pass1" }));
        const humanKey = await users.call("AddKey", { id: person, key: { generate: "KEY_TYPE_RSA", expirationDate: fromNow(DAY_MS) } });
        // A human user has no keys; an assertion in its name signed with a machine user's key is refused.
        const file = humanKey.ok ? (JSON.parse(humanKey.message.keyFile as string) as KeyFile) : { ...subject.key, userId: person };
        await refused(await jwtBearer(await assertion(file, base, { iss: person, sub: person })));

        const locked = await machineWithKey("KEY_TYPE_RSA");
        ok(await users.call("LockUser", { id: locked.id }));
        await refused(await jwtBearer(await assertion(locked.key, base)));
      });

      it("refuses unsigned, tampered and garbage assertions, never with a server error", async () => {
        const now = Math.floor(Date.now() / 1000);
        await refused(await jwtBearer(unsignedJwt({ iss: subject.id, sub: subject.id, aud: base, exp: now + 300, iat: now, jti: randomUUID() })));
        const good = await assertion(subject.key, base);
        const [h, , s] = good.split(".");
        const tampered = `${h}.${Buffer.from(JSON.stringify({ iss: subject.id, sub: subject.id, aud: base, exp: now + 300, iat: now, jti: randomUUID(), extra: 1 })).toString("base64url")}.${s}`;
        await refused(await jwtBearer(tampered));
        for (const garbage of ["garbage", "a.b.c", "eyJhbGciOiJSUzI1NiJ9.e30.", `${h}.%%%.${s}`]) {
          await refused(await jwtBearer(garbage));
        }
        // No assertion at all: a malformed request.
        const missing = await tokenRequest(base, { grant_type: JWT_BEARER, client_id: subject.id });
        expect(missing.status).toBeLessThan(500);
        expect(missing.status).toBeGreaterThanOrEqual(400);
        expect(["invalid_request", "invalid_grant"]).toContain(missing.body.error);
      });

      it("refuses an assertion presented at another instance", async () => {
        await refused(await jwtBearer(await assertion(subject.key, base, { aud: other.baseUrl }), PLATFORM_SCOPE, other.baseUrl));
      });
    });
  });

  describe("resource APIs", () => {
    it("accept the access token when its audience has platform, over REST and gRPC", async () => {
      const { id, username, secret } = await machineWithSecret();
      const res = await credentials(username, secret);
      const token = res.body.access_token as string;
      for (const protocol of ["rest", "grpc", "connect"] as const) {
        expect(ok(await getUser(base, token, id, protocol)).user.details.id, protocol).toBe(id);
      }
      const { id: keyed, key } = await machineWithKey("KEY_TYPE_EC");
      const viaAssertion = (await jwtBearer(await assertion(key, base))).body.access_token as string;
      expect(ok(await getUser(base, viaAssertion, keyed, "grpc")).user.details.id).toBe(keyed);
    });

    it("refuse a token without the platform audience", async () => {
      const { id, username, secret } = await machineWithSecret();
      const projectId = await createProject(projectClient(base, server.adminToken), uniqueName("Not platform"));
      for (const scope of ["openid profile", projectScope(projectId)]) {
        const token = (await credentials(username, secret, scope)).body.access_token as string;
        const rest = await getUser(base, token, id, "rest");
        expect(rest, JSON.stringify(rest)).toMatchObject({ ok: false, httpStatus: 401 });
        expect(await getUser(base, token, id, "grpc")).toMatchObject({ ok: false, code: Code.Unauthenticated });
      }
      const opaque = await machineWithSecret({ opaque: true });
      const token = (await credentials(opaque.username, opaque.secret, "openid")).body.access_token as string;
      expect(await getUser(base, token, opaque.id, "rest")).toMatchObject({ ok: false, httpStatus: 401 });
    });

    it("refuse a token on another instance's host, both ways", async () => {
      const { id, username, secret } = await machineWithSecret();
      const token = (await credentials(username, secret)).body.access_token as string;
      expect(await getUser(other.baseUrl, token, id, "rest")).toMatchObject({ ok: false, httpStatus: 401 });
      expect(await getUser(other.baseUrl, token, id, "grpc")).toMatchObject({ ok: false, code: Code.Unauthenticated });
      const opaque = await machineWithSecret({ opaque: true });
      const opaqueToken = (await credentials(opaque.username, opaque.secret)).body.access_token as string;
      expect(await getUser(other.baseUrl, opaqueToken, opaque.id, "rest")).toMatchObject({ ok: false, httpStatus: 401 });

      // The other instance's own machine user gets tokens there, which work there only.
      const theirUsers = new Users({ ...server, baseUrl: other.baseUrl, adminToken: other.adminToken } as TestServer);
      const theirName = uniqueName("theirs");
      const theirId = await theirUsers.create(machineUser(theirName, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
      const theirSecret = ok(await theirUsers.call("GenerateSecret", { id: theirId })).clientSecret as string;
      const theirs = await tokenRequest(
        other.baseUrl,
        { grant_type: "client_credentials", scope: PLATFORM_SCOPE },
        { authorization: basic(theirName, theirSecret) },
      );
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
      const claims = await verifyAccessToken(other.baseUrl, theirs.body.access_token);
      expect(claims.iss).toBe(other.baseUrl);
      await expect(verifyAccessToken(base, theirs.body.access_token)).rejects.toThrow();
      expect(ok(await getUser(other.baseUrl, theirs.body.access_token, theirId)).user.details.id).toBe(theirId);
      expect(await getUser(base, theirs.body.access_token, theirId, "rest")).toMatchObject({ ok: false, httpStatus: 401 });
      expectOAuthError(await credentials(theirName, theirSecret), 401, "invalid_client");
    });
  });

  describe("RotateKeys", () => {
    const rotate = (baseUrl: string, id: string, token?: string, protocol: Protocol = "rest") =>
      protocolClient(PlatformInstances, protocol, baseUrl).call("RotateKeys", { id }, token);

    it("is refused without instance.write", async () => {
      const plain = await server.createUser({});
      const r = await rotate(base, server.instanceId, plain.token);
      expect(r, JSON.stringify(r)).toMatchObject({ ok: false, httpStatus: 403, code: Code.PermissionDenied });
      const orgOwner = await server.createUser({ roles: [{ context: "org", contextId: server.defaultOrgId, roles: ["ORG_OWNER"] }] });
      expect(await rotate(base, server.instanceId, orgOwner.token, "grpc")).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await rotate(base, server.instanceId)).toMatchObject({ ok: false, httpStatus: 401 });
      // Another instance's administrator cannot rotate this instance's keys.
      const kidsBefore = (await fetchJwks(base)).keys.map((k) => k.kid);
      const foreign = await rotate(other.baseUrl, server.instanceId, other.adminToken);
      expect(foreign.ok, JSON.stringify(foreign)).toBe(false);
      expect((await fetchJwks(base)).keys.map((k) => k.kid)).toEqual(kidsBefore);
    });

    it("publishes the new key at once; tokens keep being signed by the current key until it activates", async () => {
      const { username, secret } = await machineWithSecret();
      const before = (await credentials(username, secret)).body.access_token as string;
      const oldKid = decodeProtectedHeader(before).kid;
      const started = Date.now();
      const rotated = ok(await rotate(base, server.instanceId, server.adminToken));
      expect(rotated.keyId).toEqual(expect.any(String));
      expect(rotated.keyId).not.toBe(oldKid);
      const activation = new Date(rotated.activationDate as string).getTime();
      expect(activation).toBeGreaterThanOrEqual(started + 3600_000 - 5_000);
      expect(activation).toBeLessThanOrEqual(Date.now() + 3600_000 + 5_000);
      const kids = (await fetchJwks(base)).keys.map((k) => k.kid);
      expect(kids).toEqual(expect.arrayContaining([oldKid, rotated.keyId]));
      const after = (await credentials(username, secret)).body.access_token as string;
      expect(decodeProtectedHeader(after).kid).toBe(oldKid);
      await verifyAccessToken(base, before);
      await verifyAccessToken(base, after);
      // Rotating again while a successor waits gives that successor.
      const again = ok(await rotate(base, server.instanceId, server.adminToken, "grpc"));
      expect(again.keyId).toBe(rotated.keyId);
      // The other instance's keys are untouched.
      expect((await fetchJwks(other.baseUrl)).keys.map((k) => k.kid)).not.toContain(rotated.keyId);
    });
  });
});

describe.each(DATABASE_KINDS)("ES256 signing keys (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_OIDC_SIGNING_ALG: "ES256" });
    users = new Users(server);
  });
  afterAll(() => server?.close());

  it("publishes an EC P-256 key and signs access and ID tokens with ES256", async () => {
    const base = server.baseUrl;
    const { keys } = await fetchJwks(base);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.any(String) });
      for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
    }
    const doc = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.id_token_signing_alg_values_supported).toContain("ES256");

    const username = uniqueName("es");
    const id = await users.create(machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    const config = await client.discovery(new URL(base), username, secret, client.ClientSecretBasic(secret), insecure);
    const tokens = await client.clientCredentialsGrant(config, { scope: PLATFORM_SCOPE });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    const { payload } = await jwtVerify(tokens.access_token, jwksOf(base), { issuer: base, typ: "at+jwt", algorithms: ["ES256"] });
    expect(payload.sub).toBe(id);
    expect(ok(await protocolClient(PlatformUsers, "rest", base).call("GetUser", { id }, tokens.access_token)).user.details.id).toBe(id);

    const m = ok(await users.call("AddKey", { id, key: { generate: "KEY_TYPE_RSA", expirationDate: fromNow(DAY_MS) } }));
    const file = JSON.parse(m.keyFile as string) as KeyFile;
    const bearer = await client.discovery(new URL(base), id, { id_token_signed_response_alg: "ES256" }, client.None(), insecure);
    const withId = await client.genericGrantRequest(bearer, JWT_BEARER, { assertion: await assertion(file, base), scope: `openid ${PLATFORM_SCOPE}` });
    const idToken = await jwtVerify(withId.id_token!, jwksOf(base), { issuer: base, audience: id, algorithms: ["ES256"] });
    expect(idToken.protectedHeader.alg).toBe("ES256");
    expect(idToken.payload.sub).toBe(id);
    expect(decodeProtectedHeader(withId.access_token).alg).toBe("ES256");
  });
});

describe.each(DATABASE_KINDS)("key rotation with short leads (%s)", (kind) => {
  let server: TestServer;
  let users: Users;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_OIDC_KEY_PUBLISH_AHEAD: "4s", PLATFORM_OIDC_JWKS_MAX_AGE: "1s", PLATFORM_OIDC_KEY_ROTATE_EVERY: "1h" });
    users = new Users(server);
  });
  afterAll(() => server?.close());

  it("signs with the new key after the lead; tokens of the old key keep verifying and working", { timeout: 60_000 }, async () => {
    const base = server.baseUrl;
    const { res } = await fetchJwks(base);
    expect(res.headers.get("cache-control")).toBe("public, max-age=1");

    const username = uniqueName("rot");
    const id = await users.create(machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    const issue = async () => {
      const r = await tokenRequest(base, { grant_type: "client_credentials", scope: PLATFORM_SCOPE }, { authorization: basic(username, secret) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.access_token as string;
    };
    const old = await issue();
    const oldKid = decodeProtectedHeader(old).kid!;

    const started = Date.now();
    const rotated = ok(await protocolClient(PlatformInstances, "rest", base).call("RotateKeys", { id: server.instanceId }, server.adminToken));
    const newKid = rotated.keyId as string;
    expect(newKid).not.toBe(oldKid);
    const activation = new Date(rotated.activationDate as string).getTime();
    expect(activation - started).toBeGreaterThanOrEqual(3_000);
    expect(activation - started).toBeLessThanOrEqual(6_000);
    expect((await fetchJwks(base)).keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    // Before activation, the old key still signs.
    expect(decodeProtectedHeader(await issue()).kid).toBe(oldKid);

    // After the lead (plus a quarter of it for the cache), the new key signs.
    let fresh: string | undefined;
    while (Date.now() < activation + 8_000) {
      const t = await issue();
      if (decodeProtectedHeader(t).kid === newKid) {
        expect(Date.now(), "the new key signed before its activation").toBeGreaterThanOrEqual(activation - 50);
        fresh = t;
        break;
      }
      await sleep(250);
    }
    expect(fresh, "no token was signed by the new key").toBeDefined();
    // Within a quarter of the lead (the key cache) plus polling slack.
    expect(Date.now() - activation).toBeLessThanOrEqual(2_500);

    // Both keys are published; both tokens verify and work.
    const kids = (await fetchJwks(base)).keys.map((k) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
    for (const t of [old, fresh!]) {
      expect((await verifyAccessToken(base, t)).sub).toBe(id);
      expect(ok(await protocolClient(PlatformUsers, "rest", base).call("GetUser", { id }, t)).user.details.id).toBe(id);
      expect(ok(await protocolClient(PlatformUsers, "grpc", base).call("GetUser", { id }, t)).user.details.id).toBe(id);
    }
    // Tokens issued from now on carry the new kid.
    expect(decodeProtectedHeader(await issue()).kid).toBe(newKid);
  });
});
