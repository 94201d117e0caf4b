import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import type { ExternalLoginSettings } from "../config/external-login.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { OutboundClient } from "../http/outbound.js";
import type { ExternalProfileJson } from "../domain/idp-intent/model.js";
import { UpstreamDocuments, type DocumentCheck } from "./documents.js";
import { fetchJson, getJson, isObject, UpstreamError, type Fetching } from "./fetch.js";
import type { LdapSettings } from "./ldap.js";

/**
 * The upstream side of external login: where a provider type's endpoints are, the
 * authorization request (state, PKCE S256, nonce), the code exchange, the ID token's
 * validation and the user's claims. Every call goes through the outbound client (fetch.ts).
 */

/** The provider types a login button is offered for. */
export const SUPPORTED_TYPES = new Set(["oidc", "oauth", "gitlab", "gitlab_self_hosted", "github", "google", "ldap"]);

/** The types whose button leads to a form of the login pages instead of the provider's own pages. */
export const FORM_TYPES = new Set(["ldap"]);

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
  /** GitHub: the user's addresses, with the primary one and whether it is verified. */
  emailsEndpoint?: string;
  /** OpenID Connect: claims from the ID token only, without asking userinfo. */
  idTokenMapping: boolean;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  tokenAuth: "client_secret_basic" | "client_secret_post";
}

/** What the login needs to know of the upstream user: its account's id and how the provider describes it. */
export interface ExternalUser extends ExternalProfileJson {
  id: string;
}

export interface Calls extends Fetching {
  /** Discovery documents and JWKS; per client, as its address rules are. */
  documents: UpstreamDocuments;
  /** GitHub's endpoints: under its web address (authorization, token) and its API's (user, emails). */
  github: { url: string; apiUrl: string };
  /** LDAP's bounds and address rule (ldap.ts). */
  ldap: LdapSettings;
}

export function upstreamCalls(outbound: OutboundClient, timeoutMs: number, settings: ExternalLoginSettings): Calls {
  const fetching = { outbound, timeoutMs };
  const documents = new UpstreamDocuments(fetching, {
    maxAgeMs: settings.cacheMaxAgeMs,
    defaultAgeMs: settings.cacheDefaultAgeMs,
    maxEntries: settings.cacheSize,
    maxDocumentBytes: settings.cacheMaxDocumentBytes,
    refetchIntervalMs: settings.jwksRefetchIntervalMs,
  });
  return {
    ...fetching,
    documents,
    github: { url: settings.githubUrl, apiUrl: settings.githubApiUrl },
    ldap: { maxTimeoutMs: settings.ldapMaxTimeoutMs, allowPrivate: outbound.allowPrivate },
  };
}

/** Fixed issuers of the providers that are one well-known service. */
const GITLAB_ISSUER = "https://gitlab.com";
const GOOGLE_ISSUER = "https://accounts.google.com";
const OIDC_SCOPES = ["openid", "profile", "email"];

interface Discovery {
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
  if (FORM_TYPES.has(idp.type))
    throw new UpstreamError("invalid", `a ${idp.type} provider has no authorization endpoint: its sign-in is a form of the login pages`);
  const config = idp.config;
  const clientId = String(config.clientId ?? "");
  const clientSecret = box.decrypt(idp.client_secret);
  const scopes = strings(config.scopes);
  if (idp.type === "oauth" || idp.type === "github") {
    const { url, apiUrl } = calls.github;
    const endpoints =
      idp.type === "github"
        ? {
            authorizationEndpoint: `${url}/login/oauth/authorize`,
            tokenEndpoint: `${url}/login/oauth/access_token`,
            userinfoEndpoint: `${apiUrl}/user`,
            emailsEndpoint: `${apiUrl}/user/emails`,
          }
        : {
            authorizationEndpoint: String(config.authorizationEndpoint ?? ""),
            tokenEndpoint: String(config.tokenEndpoint ?? ""),
            userinfoEndpoint: String(config.userEndpoint ?? ""),
          };
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
  const check: DocumentCheck = (_url, doc) => {
    // OpenID Connect Discovery 4.3: the document must name the issuer it was fetched for.
    if (doc.issuer !== issuer && doc.issuer !== issuer.replace(/\/$/, ""))
      throw new UpstreamError("invalid", `the discovery document of ${issuer} names the issuer ${String(doc.issuer)}`);
    for (const key of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
      if (typeof doc[key] !== "string") throw new UpstreamError("invalid", `the discovery document of ${issuer} has no ${key}`);
    }
  };
  const { doc } = await calls.documents.get(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, check);
  return doc as unknown as Discovery;
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

/** What a redeemed code tells of the person: the login's view, and the provider's claims as it answered them. */
export interface Redeemed {
  user: ExternalUser;
  raw: Record<string, unknown>;
}

/** The code exchanged, the ID token validated (OpenID Connect), the user's claims read. */
export async function redeem(upstream: Upstream, calls: Calls, code: string, pending: Pending, redirectUri: string): Promise<Redeemed> {
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
    if ((typeof id !== "string" || id === "") && typeof id !== "number")
      throw new UpstreamError("invalid", `the user endpoint's answer has no ${upstream.idAttribute}`);
    const email = upstream.emailsEndpoint ? await primaryEmail(calls, upstream.emailsEndpoint, accessToken) : {};
    const raw = { ...claims, ...email };
    return { user: userOf(String(id), raw, false), raw };
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
  return { user: userOf(idClaims.sub!, claims, true), raw: claims };
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

const checkJwks: DocumentCheck = (url, doc) => {
  if (!Array.isArray(doc.keys)) throw new UpstreamError("invalid", `the provider's JWKS (${url}) has no keys`);
};

async function verifyIdToken(upstream: Upstream, calls: Calls, idToken: string, nonce: string): Promise<JWTPayload & { sub: string }> {
  // The key set is fetched by the outbound client, never by jose itself: its fetch would
  // bypass the address rules, the timeout and the size limit.
  const uri = upstream.jwksUri!;
  const verify = (jwks: Record<string, unknown>) =>
    jwtVerify(idToken, createLocalJWKSet(jwks as unknown as JSONWebKeySet), {
      issuer: upstream.issuer!,
      audience: upstream.clientId,
      algorithms: ASYMMETRIC,
      clockTolerance: 60,
    });
  const { doc, fetched } = await calls.documents.get(uri, checkJwks);
  let payload: JWTPayload;
  try {
    ({ payload } = await verify(doc).catch(async (error: unknown) => {
      // A key the kept set lacks: the provider may have rotated its keys since. Asked once
      // more, unless the set was fetched just now or refetched lately; then the token fails.
      const again = error instanceof errors.JWKSNoMatchingKey && !fetched ? await calls.documents.refetch(uri, checkJwks) : undefined;
      if (!again) throw error;
      return verify(again);
    }));
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    throw new UpstreamError("invalid", `the ID token is not valid: ${(error as Error).message}`);
  }
  if (payload.nonce !== nonce) throw new UpstreamError("invalid", "the ID token's nonce is not the one of this login");
  if (payload.azp !== undefined && payload.azp !== upstream.clientId) throw new UpstreamError("invalid", "the ID token was issued to another client (azp)");
  if (typeof payload.sub !== "string" || payload.sub === "") throw new UpstreamError("invalid", "the ID token has no subject");
  return payload as JWTPayload & { sub: string };
}

/**
 * GitHub's profile shows the address the user made public, if any, and not whether it is
 * verified: the address is the primary one of the user's addresses, verified only when GitHub
 * says so. Without them (the scope user:email not granted), the public one, unverified.
 */
async function primaryEmail(calls: Calls, url: string, accessToken: string): Promise<{ email?: string; email_verified: boolean }> {
  let listed: unknown;
  try {
    ({ body: listed } = await fetchJson(calls, url, { headers: { authorization: `Bearer ${accessToken}` } }));
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === "invalid") return { email_verified: false };
    throw error;
  }
  const primary = Array.isArray(listed) ? listed.find((e) => isObject(e) && e.primary === true && typeof e.email === "string") : undefined;
  return primary ? { email: primary.email as string, email_verified: primary.verified === true } : { email_verified: false };
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
    // Only a provider that says so vouches for an address (GitHub: primaryEmail()).
    emailVerified: email !== "" && (claims.email_verified === true || (claims.email_verified === "true" && oidc)),
    givenName: text("given_name", "first_name") || (rest.length > 0 ? first! : displayName),
    familyName: text("family_name", "last_name") || rest.join(" "),
    displayName,
    preferredLanguage: text("locale").toLowerCase().split(/[-_]/)[0] ?? "",
  };
}
