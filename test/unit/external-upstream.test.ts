import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import type { ExternalLoginSettings } from "../../src/config/external-login.js";
import { SecretBox } from "../../src/crypto/encryption.js";
import { OutboundClient } from "../../src/http/outbound.js";
import { freshnessMs } from "../../src/upstream-idps/documents.js";
import { UpstreamError } from "../../src/upstream-idps/fetch.js";
import { authorizationUrl, newPending, redeem, upstreamCalls, upstreamOf, type Calls, type StoredIdp } from "../../src/upstream-idps/clients.js";

/**
 * The checks of an upstream OpenID Connect answer that a real provider never gets wrong, and
 * what is kept of its documents: against a fake provider on 127.0.0.1 whose ID tokens,
 * userinfo, keys and Cache-Control headers the test chooses, and which counts its calls.
 */
describe("external login upstream (src/upstream-idps/clients.ts)", () => {
  const box = new SecretBox("0123456789abcdef0123456789abcdef");
  const defaults = loadConfig({}).externalLogin;
  let server: http.Server;
  let issuer: string;
  /** The signing keys by kid; the JWKS publishes those in `published`. */
  const keys = new Map<string, { privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]; jwk: Record<string, unknown> }>();
  let published: string[];
  /** What the fake provider's token endpoint and userinfo answer next, and with which key it signs. */
  let next: { claims: Record<string, unknown>; userinfo: Record<string, unknown>; discoveryIssuer?: string; kid?: string } = { claims: {}, userinfo: {} };
  /** The Cache-Control of the discovery document and of the JWKS; absent: none. */
  let cacheControl: { discovery?: string; jwks?: string } = {};
  let tokenRequest: { auth?: string; body: string } | undefined;
  const fetches = { discovery: 0, jwks: 0 };

  async function addKey(kid: string) {
    const pair = await generateKeyPair("ES256", { extractable: true });
    keys.set(kid, { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: "ES256", use: "sig" } });
  }

  beforeAll(async () => {
    for (const kid of ["k1", "k2", "k9"]) await addKey(kid);
    server = http.createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      const json = (value: unknown, cache?: string) => {
        res.writeHead(200, { "content-type": "application/json", ...(cache !== undefined && { "cache-control": cache }) });
        res.end(JSON.stringify(value));
      };
      if (req.url === "/.well-known/openid-configuration") {
        fetches.discovery++;
        const doc = {
          issuer: next.discoveryIssuer ?? issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          userinfo_endpoint: `${issuer}/userinfo`,
          jwks_uri: `${issuer}/jwks`,
        };
        return json(doc, cacheControl.discovery);
      }
      if (req.url === "/jwks") {
        fetches.jwks++;
        return json({ keys: published.map((kid) => keys.get(kid)!.jwk) }, cacheControl.jwks);
      }
      if (req.url === "/token") {
        tokenRequest = { ...(req.headers.authorization && { auth: req.headers.authorization }), body };
        const kid = next.kid ?? "k1";
        const idToken = await new SignJWT(next.claims)
          .setProtectedHeader({ alg: "ES256", kid })
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(keys.get(kid)!.privateKey);
        return json({ access_token: "at", token_type: "Bearer", id_token: idToken });
      }
      if (req.url === "/userinfo") return json(next.userinfo);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    published = ["k1"];
    cacheControl = {};
    next = { claims: {}, userinfo: {} };
    fetches.discovery = fetches.jwks = 0;
  });

  const idp = (): StoredIdp => ({
    id: "i1",
    type: "oidc",
    name: "Fake",
    config: { clientId: "client-1", issuer, scopes: ["profile"] },
    client_secret: box.encrypt("s3cret"),
  });
  const calls = (settings: Partial<ExternalLoginSettings> = {}) =>
    upstreamCalls(new OutboundClient({ allowPrivate: true, maxResponseBytes: 100_000 }), 2_000, { ...defaults, ...settings });

  async function login(claims: Record<string, unknown>, userinfo: Record<string, unknown> = { sub: "u1" }, c: Calls = calls(), kid?: string) {
    const upstream = await upstreamOf(idp(), box, c);
    const pending = newPending();
    next = { claims: { iss: issuer, aud: "client-1", sub: "u1", nonce: pending.nonce, ...claims }, userinfo, ...(kid && { kid }) };
    return redeem(upstream, c, "the-code", pending, "https://down.example/ui/login/idp/callback");
  }

  it("asks with state, S256 and nonce, redeems with Basic and the verifier, and reads the claims", async () => {
    const upstream = await upstreamOf(idp(), box, calls());
    const pending = newPending();
    const url = new URL(authorizationUrl(upstream, pending, "https://down.example/cb"));
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: "client-1",
      state: pending.state,
      nonce: pending.nonce,
      code_challenge_method: "S256",
      scope: "openid profile",
    });
    const { user, raw } = await login(
      {},
      { sub: "u1", email: "a@b.example", email_verified: true, given_name: "Ann", family_name: "Bee", preferred_username: "ann" },
    );
    expect(user).toMatchObject({ id: "u1", username: "ann", email: "a@b.example", emailVerified: true, givenName: "Ann", familyName: "Bee" });
    // The claims as the provider gave them, for a login UI's RetrieveIDPIntent.
    expect(raw).toMatchObject({ sub: "u1", aud: "client-1", preferred_username: "ann" });
    expect(tokenRequest!.auth).toBe(`Basic ${Buffer.from("client-1:s3cret").toString("base64")}`);
    expect(new URLSearchParams(tokenRequest!.body).get("code_verifier")).toBeTruthy();
  });

  it("refuses an ID token with another nonce, audience, issuer or azp, and userinfo about another subject", async () => {
    for (const claims of [
      { nonce: "other" },
      { aud: "someone-else" },
      { iss: "https://evil.example" },
      { azp: "someone-else", aud: ["client-1", "someone-else"] },
    ]) {
      await expect(login(claims), JSON.stringify(claims)).rejects.toMatchObject({ name: "UpstreamError", kind: "invalid" });
    }
    await expect(login({}, { sub: "u2" })).rejects.toBeInstanceOf(UpstreamError);
  });

  it("refuses a discovery document that names another issuer, and keeps none", async () => {
    next = { claims: {}, userinfo: {}, discoveryIssuer: "https://evil.example" };
    cacheControl.discovery = "max-age=600";
    const c = calls();
    await expect(upstreamOf(idp(), box, c)).rejects.toMatchObject({ kind: "invalid" });
    next = { claims: {}, userinfo: {} };
    await upstreamOf(idp(), box, c);
    expect(fetches.discovery).toBe(2);
  });

  it("calls nothing internal without allowPrivate: refused", async () => {
    const c = upstreamCalls(new OutboundClient({ allowPrivate: false, maxResponseBytes: 100_000 }), 2_000, defaults);
    await expect(upstreamOf(idp(), box, c)).rejects.toMatchObject({ kind: "refused" });
  });

  describe("kept documents", () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ["Date"] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });
    const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
    const loginWith = (c: Calls, kid?: string) => login({}, undefined, c, kid);

    it("keeps the discovery document and the JWKS as long as their max-age allows, then fetches them again", async () => {
      cacheControl = { discovery: "public, max-age=60", jwks: "public, max-age=100" };
      const c = calls();
      for (let i = 0; i < 3; i++) await loginWith(c);
      expect(fetches).toEqual({ discovery: 1, jwks: 1 });
      later(61_000);
      await loginWith(c);
      expect(fetches).toEqual({ discovery: 2, jwks: 1 });
      later(40_000);
      await loginWith(c);
      expect(fetches).toEqual({ discovery: 2, jwks: 2 });
    });

    it.each([
      ["no-store and no-cache", { discovery: "no-store", jwks: "no-cache" }, {}],
      ["a maximum age of 0", { discovery: "max-age=600", jwks: "max-age=600" }, { cacheMaxAgeMs: 0 }],
      ["documents longer than the maximum size", { discovery: "max-age=600", jwks: "max-age=600" }, { cacheMaxDocumentBytes: 100 }],
    ])("keeps nothing with %s", async (_label, control, settings) => {
      cacheControl = control;
      const c = calls(settings);
      for (let i = 0; i < 3; i++) await loginWith(c);
      expect(fetches).toEqual({ discovery: 3, jwks: 3 });
    });

    it("keeps a document no longer than the maximum age, and no more documents than the maximum number", async () => {
      cacheControl = { discovery: "max-age=86400", jwks: "max-age=86400" };
      const short = calls({ cacheMaxAgeMs: 10_000 });
      await loginWith(short);
      later(10_000);
      await loginWith(short);
      expect(fetches).toEqual({ discovery: 2, jwks: 2 });
      // One entry: the JWKS pushes the discovery document out, and the other way round.
      fetches.discovery = fetches.jwks = 0;
      const one = calls({ cacheSize: 1 });
      for (let i = 0; i < 2; i++) await loginWith(one);
      expect(fetches).toEqual({ discovery: 2, jwks: 2 });
    });

    it("refetches the JWKS once for ID tokens signed by a key it lacks, then refuses them; again only after the interval", async () => {
      cacheControl = { jwks: "max-age=600" };
      const c = calls();
      await loginWith(c);
      expect(fetches.jwks).toBe(1);
      // A flood of tokens by a key the provider does not publish: one refetch in all.
      for (let i = 0; i < 5; i++) await expect(loginWith(c, "k9")).rejects.toMatchObject({ kind: "invalid", message: /key/ });
      expect(fetches.jwks).toBe(2);
      // The provider rotates to k2; after the interval its first token refetches the set, the next ones find k2 kept.
      published = ["k1", "k2"];
      later(defaults.jwksRefetchIntervalMs);
      await loginWith(c, "k2");
      await loginWith(c, "k2");
      expect(fetches.jwks).toBe(3);
    });

    it("does not refetch a JWKS it fetched for this very token", async () => {
      await expect(loginWith(calls(), "k9")).rejects.toMatchObject({ kind: "invalid" });
      expect(fetches.jwks).toBe(1);
    });
  });

  it.each([
    ["no Cache-Control: the default age", {}, 300_000],
    ["max-age", { "cache-control": "public, max-age=60" }, 60_000],
    ["max-age quoted, among other directives", { "cache-control": 'private, Max-Age="30", must-revalidate' }, 30_000],
    ["max-age less the Age spent in caches", { "cache-control": "max-age=60", age: "50" }, 10_000],
    ["an Age beyond max-age", { "cache-control": "max-age=10", age: "20" }, 0],
    ["max-age beyond the maximum", { "cache-control": "max-age=86400" }, 3_600_000],
    ["no-store", { "cache-control": "no-store" }, 0],
    ["no-cache with max-age", { "cache-control": "no-cache, max-age=60" }, 0],
    ["no directive about age", { "cache-control": "public" }, 300_000],
  ])("Cache-Control: %s", (_label, headers, expected) => {
    expect(freshnessMs(headers, { maxAgeMs: 3_600_000, defaultAgeMs: 300_000 })).toBe(expected);
  });
});
