import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, machineUser, uniqueName, ok, DAY_MS, fromNow } from "../users/helpers.js";

describe("smoke", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("works", async () => {
    const disc = await fetch(`${server.baseUrl}/.well-known/openid-configuration`);
    console.log(disc.status, await disc.text());
    const jwks = await fetch(`${server.baseUrl}/oauth/v2/keys`);
    console.log(jwks.status, jwks.headers.get("cache-control"), await jwks.text());
    const users = new Users(server);
    const name = uniqueName("svc");
    const id = await users.create(machineUser(name, { accessTokenType: "ACCESS_TOKEN_TYPE_JWT" }));
    const secret = ok(await users.call("GenerateSecret", { id })).clientSecret;
    const basic = Buffer.from(`${name}:${secret}`).toString("base64");
    const tok = await fetch(`${server.baseUrl}/oauth/v2/token`, { method: "POST", headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=client_credentials&scope=openid%20profile%20urn:platform:iam:org:project:id:platform:aud" });
    const body = await tok.json();
    console.log(tok.status, body);
    const ui = await fetch(`${server.baseUrl}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` } });
    console.log(ui.status, await ui.text());
    const me = await fetch(`${server.baseUrl}/resources/v3alpha/users/${id}`, { headers: { authorization: `Bearer ${body.access_token}` } });
    console.log(me.status, await me.text());
    const key = ok(await users.call("AddKey", { id, key: { generate: "KEY_TYPE_EC", expirationDate: fromNow(DAY_MS) } }));
    console.log(key.keyFile.slice(0, 50));
    expect(tok.status).toBe(200);
  });
});
