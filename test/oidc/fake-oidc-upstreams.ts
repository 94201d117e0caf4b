import { generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWTPayload } from "jose";

/**
 * Microsoft's identity platform and Sign in with Apple as external login uses them, on
 * 127.0.0.1, standing in for https://login.microsoftonline.com and https://appleid.apple.com
 * (PLATFORM_AZURE_AD_URL, PLATFORM_APPLE_URL). Both discover, redeem a code once for the
 * registered client (PKCE checked) and sign an ID token (ES256) with the nonce of the
 * authorization request; what the token says is the test's (`claims`).
 *
 * Azure: `/<tenant>/v2.0/.well-known/openid-configuration` names the templated issuer
 * `<url>/{tenantid}/v2.0` for `common` and `organizations`, and `<url>/<guid>/v2.0` for a
 * tenant (its GUID, or one of `domains`), as Microsoft's do. The authorization endpoint sends
 * the browser straight back with a code (a GET).
 *
 * Apple: the authorization endpoint answers the page Apple's form_post is (a form posting
 * code, state and, when `user` is set, the user's name to the redirect URI); the token endpoint
 * takes only a client secret that is an ES256 JWT of the team's registered key (kid, iss, sub,
 * aud, a short lifetime), as Apple's does.
 */

interface Pending {
  claims: JWTPayload;
  nonce: string;
  challenge: string;
  redirectUri: string;
}

interface Base {
  url: string;
  clientId: string;
  /** The claims of the next ID token (sub, tid, iss, email…): iss defaults to the right one. */
  claims: JWTPayload;
  /** The token endpoint's refusals, as the provider answered them. */
  refusals: string[];
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface FakeAzure extends Base {
  clientSecret: string;
  /** Domain names of tenants, by tenant ID, for a tenant configured by domain. */
  domains: Record<string, string>;
}

export interface FakeApple extends Base {
  teamId: string;
  keyId: string;
  /** The team's private key as Apple's .p8 file holds it, and its public half Apple keeps. */
  privateKey: string;
  publicKey: KeyObject;
  /** The `user` field of the next form_post (Apple sends it on the first sign-in only). */
  user: { name: { firstName: string; lastName: string }; email: string } | undefined;
}

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string, base: string) => Promise<void>) {
  let base = "";
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += String(chunk)));
    req.on("end", () => {
      handler(req, res, body, base).catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const json = (res: http.ServerResponse, status: number, value: unknown): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

/** The signing key of a fake's ID tokens, and its JWKS. */
async function signer() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "fake-1", alg: "ES256", use: "sig" }] };
  const sign = (claims: JWTPayload) =>
    new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "fake-1" }).setIssuedAt().setExpirationTime("5m").sign(privateKey);
  return { jwks, sign };
}

/** The authorization request kept for its code; the token request checked against it (PKCE S256, redirect URI). */
function codes() {
  const pending = new Map<string, Pending>();
  return {
    issue(url: URL, claims: JWTPayload): string {
      const code = randomUUID();
      pending.set(code, {
        claims: { ...claims },
        nonce: url.searchParams.get("nonce") ?? "",
        challenge: url.searchParams.get("code_challenge") ?? "",
        redirectUri: url.searchParams.get("redirect_uri") ?? "",
      });
      return code;
    },
    async redeem(form: URLSearchParams): Promise<Pending | undefined> {
      const found = pending.get(form.get("code") ?? "");
      pending.delete(form.get("code") ?? "");
      if (!found || found.redirectUri !== form.get("redirect_uri")) return undefined;
      const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(form.get("code_verifier") ?? ""))).toString("base64url");
      return digest === found.challenge ? found : undefined;
    },
  };
}

const TENANT_TYPES = new Set(["common", "organizations", "consumers"]);
const CONSUMERS = "9188040d-6c67-45c5-b8c6-0e3d5ba3f9c2";

export async function startFakeAzure(): Promise<FakeAzure> {
  const { jwks, sign } = await signer();
  const pending = codes();
  const fake = {
    clientId: "azure-app",
    clientSecret: "azure-secret",
    claims: {} as JWTPayload,
    domains: {} as Record<string, string>,
    refusals: [] as string[],
  };
  /** The tenant a path names: one of the multi-tenant kinds, or a tenant's GUID (from its domain). */
  const tenantOf = (segment: string) => (TENANT_TYPES.has(segment) ? segment : (Object.entries(fake.domains).find(([, d]) => d === segment)?.[0] ?? segment));
  const { base, close } = await serve(async (req, res, body, url) => {
    const at = new URL(req.url ?? "/", url);
    const [, segment = "", ...rest] = at.pathname.split("/");
    const tenant = tenantOf(segment);
    const path = rest.join("/");
    if (path === "v2.0/.well-known/openid-configuration") {
      const issuer =
        tenant === "common" || tenant === "organizations" ? `${url}/{tenantid}/v2.0` : `${url}/${tenant === "consumers" ? CONSUMERS : tenant}/v2.0`;
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${url}/${segment}/oauth2/v2.0/authorize`,
        token_endpoint: `${url}/${segment}/oauth2/v2.0/token`,
        jwks_uri: `${url}/${segment}/discovery/v2.0/keys`,
        userinfo_endpoint: `${url}/graph/oidc/userinfo`,
        token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
      });
    }
    if (path === "discovery/v2.0/keys") return json(res, 200, jwks);
    if (path === "oauth2/v2.0/authorize") {
      const back = new URL(at.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", pending.issue(at, fake.claims));
      back.searchParams.set("state", at.searchParams.get("state")!);
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (path === "oauth2/v2.0/token" && req.method === "POST") {
      const form = new URLSearchParams(body);
      const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
      const [id, secret] = basic.split(":").map((s) => decodeURIComponent(s.replace(/\+/g, " ")));
      const found = await pending.redeem(form);
      if (id !== fake.clientId || secret !== fake.clientSecret || !found) {
        fake.refusals.push("invalid_grant");
        return json(res, 400, { error: "invalid_grant" });
      }
      const tid = String(found.claims.tid ?? "");
      const idToken = await sign({ iss: `${url}/${tid}/v2.0`, aud: fake.clientId, nonce: found.nonce, ver: "2.0", ...found.claims });
      return json(res, 200, { access_token: randomUUID(), token_type: "Bearer", id_token: idToken });
    }
    json(res, 404, { error: "not_found" });
  });
  return Object.assign(fake, { url: base, env: { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_AZURE_AD_URL: base }, close });
}

export async function startFakeApple(): Promise<FakeApple> {
  const { jwks, sign } = await signer();
  const pending = codes();
  const { privateKey: teamKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const privateKey = teamKey.export({ type: "pkcs8", format: "pem" }) as string;
  const fake = {
    clientId: "com.example.signin",
    teamId: "TEAM123456",
    keyId: "KEY1234567",
    privateKey,
    publicKey,
    claims: {} as JWTPayload,
    user: undefined as FakeApple["user"],
    refusals: [] as string[],
  };
  const { base, close } = await serve(async (req, res, body, url) => {
    const at = new URL(req.url ?? "/", url);
    if (at.pathname === "/.well-known/openid-configuration") {
      return json(res, 200, {
        issuer: url,
        authorization_endpoint: `${url}/auth/authorize`,
        token_endpoint: `${url}/auth/token`,
        jwks_uri: `${url}/auth/keys`,
        response_modes_supported: ["query", "fragment", "form_post"],
        token_endpoint_auth_methods_supported: ["client_secret_post"],
      });
    }
    if (at.pathname === "/auth/keys") return json(res, 200, jwks);
    if (at.pathname === "/auth/authorize") {
      if (at.searchParams.get("response_mode") !== "form_post" || at.searchParams.get("client_id") !== fake.clientId)
        return void res.writeHead(400, { "content-type": "text/plain" }).end("invalid_request");
      const fields: Record<string, string> = { code: pending.issue(at, fake.claims), state: at.searchParams.get("state")! };
      if (fake.user) fields.user = JSON.stringify(fake.user);
      const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
      const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v)}">`);
      const html = `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(at.searchParams.get("redirect_uri")!)}">${inputs.join("")}<button>Continue</button></form></body></html>`;
      return void res.writeHead(200, { "content-type": "text/html" }).end(html);
    }
    if (at.pathname === "/auth/token" && req.method === "POST") {
      const form = new URLSearchParams(body);
      const refused = await clientSecretRefusal(form, fake, url);
      const found = refused ? undefined : await pending.redeem(form);
      if (refused || !found) {
        fake.refusals.push(refused ?? "invalid_grant");
        return json(res, 400, { error: refused ? "invalid_client" : "invalid_grant" });
      }
      const idToken = await sign({ iss: url, aud: fake.clientId, nonce: found.nonce, ...found.claims });
      return json(res, 200, { access_token: randomUUID(), token_type: "Bearer", id_token: idToken });
    }
    json(res, 404, { error: "not_found" });
  });
  return Object.assign(fake, { url: base, env: { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_APPLE_URL: base }, close });
}

/** Why Apple would refuse the client secret, or undefined: an ES256 JWT of the team's key, for this client and Apple. */
async function clientSecretRefusal(form: URLSearchParams, fake: Pick<FakeApple, "clientId" | "teamId" | "keyId" | "publicKey">, audience: string) {
  if (form.get("client_id") !== fake.clientId) return "client_id";
  const secret = form.get("client_secret") ?? "";
  try {
    if (decodeProtectedHeader(secret).kid !== fake.keyId) return "kid";
    const { payload } = await jwtVerify(secret, fake.publicKey, { algorithms: ["ES256"], issuer: fake.teamId, subject: fake.clientId, audience });
    if (typeof payload.iat !== "number" || typeof payload.exp !== "number" || payload.exp - payload.iat > 15_777_000) return "lifetime";
    return undefined;
  } catch (error) {
    return `client_secret: ${(error as Error).message}`;
  }
}
