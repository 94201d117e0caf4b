import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { machineUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * A key rotation while tokens are in flight, with the publication lead and token lifetime
 * shrunk to seconds: the successor signs once its lead has passed, and a token signed by the
 * previous key keeps verifying against the JWKS and keeps working until it expires.
 */

const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const TOKEN_TTL_S = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASE_KINDS)("key rotation with tokens in flight (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, {
      PLATFORM_OIDC_KEY_PUBLISH_AHEAD: "3s",
      PLATFORM_OIDC_JWKS_MAX_AGE: "1s",
      PLATFORM_OIDC_ACCESS_TOKEN_TTL: `${TOKEN_TTL_S}s`,
    });
  }, 120_000);
  afterAll(() => server?.close());

  const jwks = async () => (await (await fetch(`${server.baseUrl}/oauth/v2/keys`)).json()) as JSONWebKeySet;
  const verify = async (token: string) => jwtVerify(token, createLocalJWKSet(await jwks()), { issuer: server.baseUrl, typ: "at+jwt" });
  const userinfo = async (token: string) => (await fetch(`${server.baseUrl}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;

  it("signs with the successor after its lead; the old key's tokens verify and work until they expire", async () => {
    const users = new Users(server);
    const username = uniqueName("rotating");
    const id = await users.create(machineUser(username, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret as string;
    const config = await client.discovery(new URL(server.baseUrl), username, secret, client.ClientSecretBasic(secret), {
      execute: [client.allowInsecureRequests],
    });
    const grant = async () => (await client.clientCredentialsGrant(config, { scope: `openid ${PLATFORM_SCOPE}` })).access_token;

    const before = await grant();
    const issuedAt = Date.now();
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = ok(await protocolClient(PlatformInstances, "rest", server.baseUrl).call("RotateKeys", { id: server.instanceId }, server.adminToken));
    const activation = new Date(rotated.activationDate as string).getTime();
    expect(activation - Date.now()).toBeLessThanOrEqual(3_000);
    expect((await jwks()).keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.keyId]));

    // Past the activation, and past the cache's reload (a quarter of the lead), the successor signs.
    await sleep(Math.max(0, activation - Date.now()) + 1_500);
    const after = await grant();
    expect(decodeProtectedHeader(after).kid).toBe(rotated.keyId);

    // The old key is retired, not gone: its token verifies and is accepted everywhere.
    expect((await jwks()).keys.map((k) => k.kid)).toContain(oldKid);
    expect((await verify(before)).payload.sub).toBe(id);
    expect((await verify(after)).payload.sub).toBe(id);
    expect(await userinfo(before)).toBe(200);
    const users$ = protocolClient(PlatformUsers, "connect", server.baseUrl);
    expect(ok(await users$.call("GetUser", { id }, before)).user.details.id).toBe(id);

    // Until it expires.
    await sleep(Math.max(0, issuedAt + TOKEN_TTL_S * 1000 - Date.now()) + 1_000);
    expect(await userinfo(before)).toBe(401);
    expect((await users$.call("GetUser", { id }, before)).ok).toBe(false);
    expect(await userinfo(after)).toBe(200);
  }, 60_000);
});
