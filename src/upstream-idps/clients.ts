import { createHash, createPrivateKey, randomBytes } from "node:crypto";
import { createLocalJWKSet, errors, jwtVerify, SignJWT, type JSONWebKeySet, type JWTPayload } from "jose";
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
export const SUPPORTED_TYPES = new Set(["oidc", "oauth", "gitlab", "gitlab_self_hosted", "github", "google", "azure_ad", "apple", "ldap", "saml"]);

/** The types whose button leads to a form of the login pages instead of the provider's own pages. */
export const FORM_TYPES = new Set(["ldap"]);

export interface StoredIdp {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  /** Sealed (crypto/encryption.ts): the client secret, or Apple's private key. */
  client_secret: string;
}

/** Microsoft's multi-tenant endpoints: tokens name the user's own tenant, whichever it is. */
type AzureTenants = "common" | "organizations" | "consumers";

export interface Upstream {
  kind: "oidc" | "oauth";
  /** The expected `iss` of ID tokens (OpenID Connect only). */
  issuer?: string;
  /**
   * Azure AD's multi-tenant endpoints instead of one issuer: an ID token's `iss` is its own
   * tenant's (its `tid`), under `base`, and the kind of tenant must be one the endpoint serves.
   */
  azureTenants?: { kind: AzureTenants; base: string };
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
  /** Read per token request: Apple's is a JWT signed for that request, short-lived. */
  clientSecret: () => Promise<string>;
  scopes: string[];
  tokenAuth: "client_secret_basic" | "client_secret_post";
  /** Apple: the code comes back in a POSTed form (flow.ts), the only way Apple gives names and emails. */
  responseMode?: "form_post";
  /** Azure AD: its ID tokens say nothing of whether the address is verified; the configuration does. */
  emailVerified?: boolean;
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
  /** Where Microsoft's identity platform (`<azureAdUrl>/<tenant>/v2.0`) and Sign in with Apple are. */
  azureAdUrl: string;
  appleUrl: string;
  /** LDAP's bounds and address rule (ldap.ts). */
  ldap: LdapSettings;
  /** SAML's clock skew (saml.ts). */
  saml: { clockSkewMs: number };
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
    azureAdUrl: settings.azureAdUrl,
    appleUrl: settings.appleUrl,
    ldap: { maxTimeoutMs: settings.ldapMaxTimeoutMs, allowPrivate: outbound.allowPrivate },
    saml: { clockSkewMs: settings.samlClockSkewMs },
  };
}

/** Fixed issuers of the providers that are one well-known service. */
const GITLAB_ISSUER = "https://gitlab.com";
const GOOGLE_ISSUER = "https://accounts.google.com";
const OIDC_SCOPES = ["openid", "profile", "email"];
/** Apple knows two scopes besides openid: the user's name (on the first sign-in only) and email. */
const APPLE_SCOPES = ["openid", "name", "email"];
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The tenant of personal Microsoft accounts: every `consumers` token names it, no `organizations` token does. */
const CONSUMERS_TENANT = "9188040d-6c67-45c5-b8c6-0e3d5ba3f9c2";
const AZURE_TENANT_TYPES: Record<string, AzureTenants> = {
  AZURE_AD_TENANT_TYPE_COMMON: "common",
  AZURE_AD_TENANT_TYPE_ORGANIZATIONS: "organizations",
  AZURE_AD_TENANT_TYPE_CONSUMERS: "consumers",
};
/** Apple's client secrets live this long: one is signed per code redeemed, so a few minutes is plenty. */
const APPLE_SECRET_TTL_S = 5 * 60;

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
  if (idp.type === "saml")
    throw new UpstreamError("invalid", "a saml provider has no authorization endpoint: its sign-in goes through the login pages (saml.ts)");
  const config = idp.config;
  const clientId = String(config.clientId ?? "");
  const sealed = idp.client_secret;
  const clientSecret = () => Promise.resolve(box.decrypt(sealed));
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
  const withOpenid = (given: string[], usual: string[]) => (given.length > 0 ? (given.includes("openid") ? given : ["openid", ...given]) : usual);
  if (idp.type === "azure_ad") return azureAd(config, clientId, clientSecret, withOpenid(scopes, OIDC_SCOPES), calls);
  const issuer =
    idp.type === "gitlab" ? GITLAB_ISSUER : idp.type === "google" ? GOOGLE_ISSUER : idp.type === "apple" ? calls.appleUrl : String(config.issuer ?? "");
  const discovery = await discover(issuer, calls, (named) => named === issuer || named === issuer.replace(/\/$/, ""));
  const upstream: Upstream = {
    kind: "oidc",
    issuer: discovery.issuer,
    ...endpointsOf(discovery),
    idTokenMapping: config.isIdTokenMapping === true,
    clientId,
    clientSecret,
    scopes: withOpenid(scopes, OIDC_SCOPES),
    tokenAuth: tokenAuthOf(discovery),
  };
  if (idp.type !== "apple") return upstream;
  // Apple has no userinfo endpoint: what it tells is in the ID token, and the name in the callback's form.
  return {
    ...upstream,
    idTokenMapping: true,
    scopes: withOpenid(scopes, APPLE_SCOPES),
    responseMode: "form_post",
    clientSecret: appleClientSecret(box, sealed, { teamId: String(config.teamId ?? ""), keyId: String(config.keyId ?? ""), clientId, audience: issuer }),
  };
}

function endpointsOf(discovery: Discovery) {
  return {
    authorizationEndpoint: discovery.authorization_endpoint,
    tokenEndpoint: discovery.token_endpoint,
    ...(discovery.userinfo_endpoint && { userinfoEndpoint: discovery.userinfo_endpoint }),
    jwksUri: discovery.jwks_uri,
  };
}

function tokenAuthOf(discovery: Discovery): Upstream["tokenAuth"] {
  const methods = discovery.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  return methods.includes("client_secret_basic") || !methods.includes("client_secret_post") ? "client_secret_basic" : "client_secret_post";
}

/**
 * Microsoft's identity platform at `<azureAdUrl>/<tenant>/v2.0`. One tenant (its GUID or one of
 * its domain names) has one issuer, named by its discovery document with the tenant's GUID,
 * and ID tokens must name exactly it. The multi-tenant endpoints' document names a template
 * (`…/{tenantid}/v2.0`) no token carries: each token's `iss` names its user's tenant, and is
 * checked against the token's own `tid` instead (verifyIdToken). Microsoft's userinfo is on
 * Graph, another service: the user is read from the ID token.
 */
async function azureAd(config: Record<string, unknown>, clientId: string, clientSecret: () => Promise<string>, scopes: string[], calls: Calls) {
  const base = calls.azureAdUrl;
  const tenant = (config.tenant ?? {}) as { tenantType?: string; tenantId?: string };
  const kind = tenant.tenantId ? undefined : (AZURE_TENANT_TYPES[tenant.tenantType ?? ""] ?? "common");
  const segment = tenant.tenantId ?? kind!;
  const tenantIssuer = (named: string) => named.startsWith(`${base}/`) && named.endsWith("/v2.0") && GUID.test(named.slice(base.length + 1, -"/v2.0".length));
  const accepts = kind
    ? // The template; `consumers` names its one tenant.
      (named: string) => named === `${base}/{tenantid}/v2.0` || tenantIssuer(named)
    : GUID.test(segment)
      ? (named: string) => named.toLowerCase() === `${base}/${segment}/v2.0`.toLowerCase()
      : tenantIssuer;
  const discovery = await discover(`${base}/${segment}/v2.0`, calls, accepts);
  return {
    kind: "oidc",
    ...(kind ? { azureTenants: { kind, base } } : { issuer: discovery.issuer }),
    ...endpointsOf(discovery),
    idTokenMapping: true,
    clientId,
    clientSecret,
    scopes,
    tokenAuth: tokenAuthOf(discovery),
    emailVerified: config.isEmailVerified === true,
  } satisfies Upstream;
}

/**
 * Sign in with Apple's client secret: a JWT (ES256) of the team, for the Services ID, signed
 * with the team's key, made anew for each code redeemed and valid a few minutes, so none is
 * kept anywhere. The key is opened only then.
 */
function appleClientSecret(box: SecretBox, sealed: string, a: { teamId: string; keyId: string; clientId: string; audience: string }) {
  return async () => {
    const key = createPrivateKey({ key: box.decrypt(sealed).trim() + "\n", format: "pem" });
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: a.keyId })
      .setIssuer(a.teamId)
      .setSubject(a.clientId)
      .setAudience(a.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + APPLE_SECRET_TTL_S)
      .sign(key);
  };
}

async function discover(issuer: string, calls: Calls, accepts: (named: string) => boolean): Promise<Discovery> {
  const check: DocumentCheck = (_url, doc) => {
    // OpenID Connect Discovery 4.3: the document must name the issuer it was fetched for.
    if (typeof doc.issuer !== "string" || !accepts(doc.issuer))
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
    ...(upstream.responseMode && { response_mode: upstream.responseMode }),
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

/** What a redeemed code tells of the person: the login's view, and the provider's claims as it answered them. */
export interface Redeemed {
  user: ExternalUser;
  raw: Record<string, unknown>;
}

/**
 * The code exchanged, the ID token validated (OpenID Connect), the user's claims read.
 * `postedUser`: the `user` field of Apple's form_post callback (its first one only), the one
 * place Apple tells the user's name.
 */
export async function redeem(upstream: Upstream, calls: Calls, code: string, pending: Pending, redirectUri: string, postedUser?: string): Promise<Redeemed> {
  const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: pending.verifier };
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  let clientSecret: string;
  try {
    clientSecret = await upstream.clientSecret();
  } catch (error) {
    // A key that no longer opens (a changed master key, say) is the configuration's fault, not the user's.
    throw new UpstreamError("invalid", `the client secret could not be made: ${(error as Error).message}`);
  }
  if (upstream.tokenAuth === "client_secret_basic") {
    // RFC 6749 2.3.1: both parts form-urlencoded before Base64.
    const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
    headers.authorization = `Basic ${Buffer.from(`${encode(upstream.clientId)}:${encode(clientSecret)}`).toString("base64")}`;
  } else {
    Object.assign(form, { client_id: upstream.clientId, client_secret: clientSecret });
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
  if (upstream.responseMode === "form_post" && postedUser) claims = { ...namesOf(postedUser), ...claims };
  const user = userOf(idClaims.sub, claims, true);
  if (upstream.emailVerified !== undefined) user.emailVerified = upstream.emailVerified && user.email !== "";
  return { user, raw: claims };
}

/**
 * The name in Apple's `user` field ({"name":{"firstName","lastName"},"email"}) as the standard
 * claims; the email is taken from the ID token only, which Apple signs, as the form is not.
 */
function namesOf(posted: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(posted);
  } catch {
    return {};
  }
  const name = isObject(parsed) && isObject(parsed.name) ? parsed.name : {};
  const text = (value: unknown) => (typeof value === "string" ? value.trim().slice(0, 200) : "");
  const given = text(name.firstName);
  const family = text(name.lastName);
  return {
    ...(given && { given_name: given }),
    ...(family && { family_name: family }),
    ...((given || family) && { name: `${given} ${family}`.trim() }),
  };
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
      // Azure's multi-tenant issuer depends on the token (azureIssuer below).
      ...(!upstream.azureTenants && { issuer: upstream.issuer! }),
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
  if (upstream.azureTenants) azureIssuer(payload, upstream.azureTenants);
  if (payload.nonce !== nonce) throw new UpstreamError("invalid", "the ID token's nonce is not the one of this login");
  if (payload.azp !== undefined && payload.azp !== upstream.clientId) throw new UpstreamError("invalid", "the ID token was issued to another client (azp)");
  if (typeof payload.sub !== "string" || payload.sub === "") throw new UpstreamError("invalid", "the ID token has no subject");
  return payload as JWTPayload & { sub: string };
}

/**
 * An ID token of Azure's multi-tenant endpoints names its user's tenant in `tid` and is issued
 * by that tenant's issuer: `iss` must be exactly `<base>/<tid>/v2.0`, or a token of any
 * issuer signed with Microsoft's common keys would pass. `consumers` serves personal accounts
 * only (their one tenant), `organizations` never them.
 */
function azureIssuer(payload: JWTPayload, tenants: NonNullable<Upstream["azureTenants"]>): void {
  const tid = payload.tid;
  if (typeof tid !== "string" || !GUID.test(tid)) throw new UpstreamError("invalid", "the ID token names no tenant (tid)");
  if (payload.iss !== `${tenants.base}/${tid}/v2.0`) throw new UpstreamError("invalid", `the ID token's issuer ${String(payload.iss)} is not its tenant's`);
  const personal = tid.toLowerCase() === CONSUMERS_TENANT;
  if ((tenants.kind === "consumers" && !personal) || (tenants.kind === "organizations" && personal))
    throw new UpstreamError("invalid", `the ID token's tenant ${tid} is not one the ${tenants.kind} endpoint serves`);
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
