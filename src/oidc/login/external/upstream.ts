import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import { TtlCache } from "../../../cache/ttl-cache.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { OutboundError, type OutboundClient } from "../../../http/outbound.js";

/**
 * The upstream side of external login: where a provider type's endpoints are, the
 * authorization request (state, PKCE S256, nonce), the code exchange, the ID token's
 * validation and the user's claims. Every call goes through the outbound client, bounded in
 * time and size and, unless allowed, never to internal addresses.
 */

/** The provider types a login button is offered for. */
export const SUPPORTED_TYPES = new Set(["oidc", "oauth", "gitlab", "gitlab_self_hosted", "github", "google"]);

/** Why an upstream step failed: `refused` is the outbound client's address rule, the others the provider's answers. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: "refused" | "unreachable" | "invalid",
    message: string,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

export interface StoredIdp {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  /** Sealed (crypto/encryption.ts). */
  client_secret: string;
}

export interface Upstream {
  kind: "oidc" | "oauth";
  /** The expected `iss` of ID tokens (OpenID Connect only). */
  issuer?: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint?: string;
  jwksUri?: string;
  /** OAuth: the property of the user endpoint's answer that identifies the user. */
  idAttribute?: string;
  /** OpenID Connect: claims from the ID token only, without asking userinfo. */
  idTokenMapping: boolean;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  tokenAuth: "client_secret_basic" | "client_secret_post";
}

/** What the login needs to know of the upstream user. */
export interface ExternalUser {
  id: string;
  username: string;
  email: string;
  emailVerified: boolean;
  givenName: string;
  familyName: string;
  displayName: string;
  preferredLanguage: string;
}

export interface Calls {
  outbound: OutboundClient;
  timeoutMs: number;
  /** Discovery documents change rarely; every login would otherwise fetch one more. Per client, as its address rules are. */
  discoveries: TtlCache<string, Discovery>;
}

export function upstreamCalls(outbound: OutboundClient, timeoutMs: number): Calls {
  return { outbound, timeoutMs, discoveries: new TtlCache(5 * 60_000, 1000) };
}

/** Fixed issuers and endpoints of the providers that are one well-known service. */
const GITLAB_ISSUER = "https://gitlab.com";
const GOOGLE_ISSUER = "https://accounts.google.com";
const GITHUB = {
  authorizationEndpoint: "https://github.com/login/oauth/authorize",
  tokenEndpoint: "https://github.com/login/oauth/access_token",
  userinfoEndpoint: "https://api.github.com/user",
};
const OIDC_SCOPES = ["openid", "profile", "email"];

// GitHub's API refuses requests without a User-Agent.
const HEADERS = { accept: "application/json", "user-agent": "platform-identity" };

export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : []);

/** A provider's endpoints and credentials; OpenID Connect types are discovered at their issuer. */
export async function upstreamOf(idp: StoredIdp, box: SecretBox, calls: Calls): Promise<Upstream> {
  const config = idp.config;
  const clientId = String(config.clientId ?? "");
  const clientSecret = box.decrypt(idp.client_secret);
  const scopes = strings(config.scopes);
  if (idp.type === "oauth" || idp.type === "github") {
    const endpoints =
      idp.type === "github"
        ? GITHUB
        : { authorizationEndpoint: String(config.authorizationEndpoint ?? ""), tokenEndpoint: String(config.tokenEndpoint ?? ""), userinfoEndpoint: String(config.userEndpoint ?? "") };
    return {
      kind: "oauth",
      ...endpoints,
      idAttribute: idp.type === "github" ? "id" : String(config.idAttribute ?? "id"),
      idTokenMapping: false,
      clientId,
      clientSecret,
      scopes: scopes.length > 0 ? scopes : idp.type === "github" ? ["read:user", "user:email"] : [],
      // Sent in the body: GitHub takes no other way, generic OAuth servers commonly accept it.
      tokenAuth: "client_secret_post",
    };
  }
  const issuer = idp.type === "gitlab" ? GITLAB_ISSUER : idp.type === "google" ? GOOGLE_ISSUER : String(config.issuer ?? "");
  const discovery = await discover(issuer, calls);
  const methods = discovery.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  return {
    kind: "oidc",
    issuer: discovery.issuer,
    authorizationEndpoint: discovery.authorization_endpoint,
    tokenEndpoint: discovery.token_endpoint,
    ...(discovery.userinfo_endpoint && { userinfoEndpoint: discovery.userinfo_endpoint }),
    jwksUri: discovery.jwks_uri,
    idTokenMapping: config.isIdTokenMapping === true,
    clientId,
    clientSecret,
    scopes: scopes.length > 0 ? (scopes.includes("openid") ? scopes : ["openid", ...scopes]) : OIDC_SCOPES,
    tokenAuth: methods.includes("client_secret_basic") || !methods.includes("client_secret_post") ? "client_secret_basic" : "client_secret_post",
  };
}

async function discover(issuer: string, calls: Calls): Promise<Discovery> {
  const cached = calls.discoveries.get(issuer);
  if (cached) return cached;
  const doc = await getJson(calls, `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, {});
  // OpenID Connect Discovery 4.3: the document must name the issuer it was fetched for.
  if (doc.issuer !== issuer && doc.issuer !== issuer.replace(/\/$/, "")) throw new UpstreamError("invalid", `the discovery document of ${issuer} names the issuer ${String(doc.issuer)}`);
  for (const key of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
    if (typeof doc[key] !== "string") throw new UpstreamError("invalid", `the discovery document of ${issuer} has no ${key}`);
  }
  const discovery = doc as unknown as Discovery;
  calls.discoveries.set(issuer, discovery);
  return discovery;
}

/** The parts of an authorization request that must come back: kept server-side until the callback. */
export interface Pending {
  state: string;
  verifier: string;
  nonce: string;
}

export function newPending(): Pending {
  const random = () => randomBytes(32).toString("base64url");
  return { state: random(), verifier: random(), nonce: random() };
}

export function authorizationUrl(upstream: Upstream, pending: Pending, redirectUri: string): string {
  const url = new URL(upstream.authorizationEndpoint);
  const params: Record<string, string> = {
    response_type: "code",
    client_id: upstream.clientId,
    redirect_uri: redirectUri,
    state: pending.state,
    code_challenge: createHash("sha256").update(pending.verifier).digest("base64url"),
    code_challenge_method: "S256",
    ...(upstream.scopes.length > 0 && { scope: upstream.scopes.join(" ") }),
    ...(upstream.kind === "oidc" && { nonce: pending.nonce }),
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

/** The code exchanged, the ID token validated (OpenID Connect), the user's claims read. */
export async function redeem(upstream: Upstream, calls: Calls, code: string, pending: Pending, redirectUri: string): Promise<ExternalUser> {
  const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: pending.verifier };
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (upstream.tokenAuth === "client_secret_basic") {
    // RFC 6749 2.3.1: both parts form-urlencoded before Base64.
    const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
    headers.authorization = `Basic ${Buffer.from(`${encode(upstream.clientId)}:${encode(upstream.clientSecret)}`).toString("base64")}`;
  } else {
    Object.assign(form, { client_id: upstream.clientId, client_secret: upstream.clientSecret });
  }
  const tokens = await getJson(calls, upstream.tokenEndpoint, { method: "POST", headers, body: new URLSearchParams(form).toString() });
  if (typeof tokens.error === "string") throw new UpstreamError("invalid", `the token endpoint refused the code: ${tokens.error}`);
  const accessToken = typeof tokens.access_token === "string" ? tokens.access_token : undefined;
  if (upstream.kind === "oauth") {
    if (!accessToken || !upstream.userinfoEndpoint) throw new UpstreamError("invalid", "the token endpoint answered no access token");
    const claims = await getJson(calls, upstream.userinfoEndpoint, { headers: { authorization: `Bearer ${accessToken}` } });
    const id = claims[upstream.idAttribute ?? "id"];
    if ((typeof id !== "string" || id === "") && typeof id !== "number") throw new UpstreamError("invalid", `the user endpoint's answer has no ${upstream.idAttribute}`);
    return userOf(String(id), claims, false);
  }
  if (typeof tokens.id_token !== "string") throw new UpstreamError("invalid", "the token endpoint answered no ID token");
  const idClaims = await verifyIdToken(upstream, calls, tokens.id_token, pending.nonce);
  let claims: Record<string, unknown> = idClaims;
  if (!upstream.idTokenMapping && upstream.userinfoEndpoint && accessToken) {
    const info = await getJson(calls, upstream.userinfoEndpoint, { headers: { authorization: `Bearer ${accessToken}` } });
    // OpenID Connect Core 5.3.2: a userinfo answer for another subject must not be used.
    if (info.sub !== idClaims.sub) throw new UpstreamError("invalid", "the userinfo answer is about another subject than the ID token");
    claims = { ...idClaims, ...info };
  }
  return userOf(idClaims.sub!, claims, true);
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

async function verifyIdToken(upstream: Upstream, calls: Calls, idToken: string, nonce: string): Promise<JWTPayload & { sub: string }> {
  // The key set is fetched by the outbound client, never by jose itself: its fetch would
  // bypass the address rules, the timeout and the size limit.
  const jwks = (await getJson(calls, upstream.jwksUri!, {})) as unknown as JSONWebKeySet;
  if (!Array.isArray(jwks.keys)) throw new UpstreamError("invalid", "the provider's JWKS has no keys");
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), { issuer: upstream.issuer!, audience: upstream.clientId, algorithms: ASYMMETRIC, clockTolerance: 60 }));
  } catch (error) {
    throw new UpstreamError("invalid", `the ID token is not valid: ${(error as Error).message}`);
  }
  if (payload.nonce !== nonce) throw new UpstreamError("invalid", "the ID token's nonce is not the one of this login");
  if (payload.azp !== undefined && payload.azp !== upstream.clientId) throw new UpstreamError("invalid", "the ID token was issued to another client (azp)");
  if (typeof payload.sub !== "string" || payload.sub === "") throw new UpstreamError("invalid", "the ID token has no subject");
  return payload as JWTPayload & { sub: string };
}

/** Standard claims (OpenID Connect), with the common OAuth spellings (GitHub's `login`, `name`). */
function userOf(id: string, claims: Record<string, unknown>, oidc: boolean): ExternalUser {
  const text = (...keys: string[]) => {
    for (const key of keys) {
      const value = claims[key];
      if (typeof value === "string" && value.trim() !== "") return value.trim().slice(0, 200);
    }
    return "";
  };
  const email = text("email");
  const displayName = text("name");
  const [first, ...rest] = displayName.split(" ");
  return {
    id,
    username: text("preferred_username", "login", "username") || email,
    email,
    // Only a provider that says so vouches for an address; GitHub's user endpoint does not.
    emailVerified: email !== "" && (claims.email_verified === true || (claims.email_verified === "true" && oidc)),
    givenName: text("given_name", "first_name") || (rest.length > 0 ? first! : displayName),
    familyName: text("family_name", "last_name") || rest.join(" "),
    displayName,
    preferredLanguage: text("locale").toLowerCase().split(/[-_]/)[0] ?? "",
  };
}

/** One call whose answer must be a JSON object with status 200. */
async function getJson(calls: Calls, url: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Record<string, unknown>> {
  let res;
  try {
    res = await calls.outbound.request(url, { method: init.method ?? "GET", headers: { ...HEADERS, ...init.headers }, ...(init.body !== undefined && { body: init.body }), timeoutMs: calls.timeoutMs });
  } catch (error) {
    if (error instanceof OutboundError) throw new UpstreamError(error.failure === "refused" || error.failure === "invalid_url" ? "refused" : "unreachable", `${url}: ${error.message}`);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString("utf8"));
  } catch {
    body = undefined;
  }
  if (res.status !== 200) {
    const error = body && typeof body === "object" && typeof (body as { error?: unknown }).error === "string" ? `: ${(body as { error: string }).error}` : "";
    throw new UpstreamError("invalid", `${url} answered ${res.status}${error}`);
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new UpstreamError("invalid", `${url} answered no JSON object`);
  return body as Record<string, unknown>;
}
