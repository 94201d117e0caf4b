import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/encryption.js";
import { OutboundClient } from "../../src/http/outbound.js";
import { authorizationUrl, newPending, redeem, upstreamCalls, upstreamOf, UpstreamError, type StoredIdp } from "../../src/oidc/login/external/upstream.js";

/**
 * The checks of an upstream OpenID Connect answer that a real provider never gets wrong:
 * against a fake provider on 127.0.0.1 whose ID tokens and userinfo the test chooses.
 */
describe("external login upstream (src/oidc/login/external/upstream.ts)", () => {
  const box = new SecretBox("0123456789abcdef0123456789abcdef");
  let server: http.Server;
  let issuer: string;
  let key: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  let jwk: Record<string, unknown>;
  /** What the fake provider's token endpoint and userinfo answer next. */
  let next: { claims: Record<string, unknown>; userinfo: Record<string, unknown>; discoveryIssuer?: string } = { claims: {}, userinfo: {} };
  let tokenRequest: { auth?: string; body: string } | undefined;

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    key = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    server = http.createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      const json = (value: unknown) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (req.url === "/.well-known/openid-configuration") {
        return json({ issuer: next.discoveryIssuer ?? issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, userinfo_endpoint: `${issuer}/userinfo`, jwks_uri: `${issuer}/jwks` });
      }
      if (req.url === "/jwks") return json({ keys: [jwk] });
      if (req.url === "/token") {
        tokenRequest = { ...(req.headers.authorization && { auth: req.headers.authorization }), body };
        const idToken = await new SignJWT(next.claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).setIssuedAt().setExpirationTime("5m").sign(key);
        return json({ access_token: "at", token_type: "Bearer", id_token: idToken });
      }
      if (req.url === "/userinfo") return json(next.userinfo);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const idp = (): StoredIdp => ({ id: "i1", type: "oidc", name: "Fake", config: { clientId: "client-1", issuer, scopes: ["profile"] }, client_secret: box.encrypt("s3cret") });
  const calls = () => upstreamCalls(new OutboundClient({ allowPrivate: true, maxResponseBytes: 100_000 }), 2_000);

  async function login(claims: Record<string, unknown>, userinfo: Record<string, unknown> = { sub: "u1" }) {
    const c = calls();
    const upstream = await upstreamOf(idp(), box, c);
    const pending = newPending();
    next = { claims: { iss: issuer, aud: "client-1", sub: "u1", nonce: pending.nonce, ...claims }, userinfo };
    return redeem(upstream, c, "the-code", pending, "https://down.example/ui/login/idp/callback");
  }

  it("asks with state, S256 and nonce, redeems with Basic and the verifier, and reads the claims", async () => {
    const c = calls();
    const upstream = await upstreamOf(idp(), box, c);
    const pending = newPending();
    const url = new URL(authorizationUrl(upstream, pending, "https://down.example/cb"));
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ response_type: "code", client_id: "client-1", state: pending.state, nonce: pending.nonce, code_challenge_method: "S256", scope: "openid profile" });
    const user = await login({}, { sub: "u1", email: "a@b.example", email_verified: true, given_name: "Ann", family_name: "Bee", preferred_username: "ann" });
    expect(user).toMatchObject({ id: "u1", username: "ann", email: "a@b.example", emailVerified: true, givenName: "Ann", familyName: "Bee" });
    expect(tokenRequest!.auth).toBe(`Basic ${Buffer.from("client-1:s3cret").toString("base64")}`);
    expect(new URLSearchParams(tokenRequest!.body).get("code_verifier")).toBeTruthy();
  });

  it("refuses an ID token with another nonce, audience, issuer or azp, and userinfo about another subject", async () => {
    for (const claims of [{ nonce: "other" }, { aud: "someone-else" }, { iss: "https://evil.example" }, { azp: "someone-else", aud: ["client-1", "someone-else"] }]) {
      await expect(login(claims), JSON.stringify(claims)).rejects.toMatchObject({ name: "UpstreamError", kind: "invalid" });
    }
    await expect(login({}, { sub: "u2" })).rejects.toBeInstanceOf(UpstreamError);
  });

  it("refuses a discovery document that names another issuer", async () => {
    next = { claims: {}, userinfo: {}, discoveryIssuer: "https://evil.example" };
    await expect(upstreamOf(idp(), box, calls())).rejects.toMatchObject({ kind: "invalid" });
    next = { claims: {}, userinfo: {} };
  });

  it("calls nothing internal without allowPrivate: refused", async () => {
    const c = upstreamCalls(new OutboundClient({ allowPrivate: false, maxResponseBytes: 100_000 }), 2_000);
    await expect(upstreamOf(idp(), box, c)).rejects.toMatchObject({ kind: "refused" });
  });
});
