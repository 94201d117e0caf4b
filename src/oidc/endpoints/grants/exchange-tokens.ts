import { createPublicKey } from "node:crypto";
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import { errors } from "oidc-provider";
import type { Db } from "../../../store/db.js";
import { activeAccount, type Account } from "../../../domain/user/accounts.js";
import { ASSERTION_ALGORITHMS, ASSERTION_CLOCK_TOLERANCE_S, MAX_ASSERTION_LIFETIME_S } from "../../provider/capabilities.js";
import type { Actor } from "../../helpers/exchange-grants.js";
import { appParty } from "../../../domain/app/parties.js";
import { claimAssertion, type OidcAdapter } from "../../adapters/payload-adapter.js";
import type { KeySet } from "../../models/signing-keys.js";
import { splitScope } from "../../helpers/scopes.js";
import { findAccessToken } from "../../helpers/tokens.js";

/** The token types of RFC 8693 section 3, and ours for a bare user id. */
export const TOKEN_TYPE = {
  accessToken: "urn:ietf:params:oauth:token-type:access_token",
  refreshToken: "urn:ietf:params:oauth:token-type:refresh_token",
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  userId: "urn:platform:params:oauth:token-type:user_id",
} as const;

/** What the spec's token-type matrix accepts in each role. */
const ACCEPTED = {
  subject: new Set<string>([TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt, TOKEN_TYPE.userId]),
  actor: new Set<string>([TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken]),
};

/** A subject or actor token, verified: whom it stands for, and what it carried. */
export interface ExchangeToken {
  account: Account;
  /** Its audience; empty for proofs that name no resource (a client's JWT, a user id). */
  aud: string[];
  /** Its scopes; undefined for types that carry none (ID tokens, JWTs, user ids). */
  scopes?: string[];
  /** The actor it was issued to already, when it came from an impersonation. */
  act?: Actor;
}

export interface ExchangeVerifier {
  db: Db;
  instanceId: string;
  keys: KeySet;
  /** This instance's issuer at the request's host: the only `iss` an ID token may name. */
  issuer: string;
  /** Where the client's JWTs must be addressed: the issuer or its token endpoint. */
  audiences: string[];
  client: { clientId: string; projectId: string; orgId: string };
  accessTokens: OidcAdapter;
  jwtRecords: OidcAdapter;
}

const invalid = (role: string, why: string) => new errors.InvalidRequest(`${role}_token is invalid: ${why}`);

/**
 * Verifies a subject or actor token of the given type. RFC 8693 section 2.2.2: a token that
 * is invalid or unacceptable by policy is `invalid_request`. Every token must come from this
 * instance (its keys, its stored tokens) and stand for an active user of an active organization.
 */
export async function verifyExchangeToken(v: ExchangeVerifier, role: "subject" | "actor", value: string, type: string): Promise<ExchangeToken> {
  if (type === TOKEN_TYPE.refreshToken) throw new errors.InvalidRequest(`refresh tokens cannot be exchanged (${role}_token_type)`);
  if (!ACCEPTED[role].has(type)) throw new errors.InvalidRequest(`${role}_token_type ${type} is not supported`);
  switch (type) {
    case TOKEN_TYPE.accessToken:
      return accessToken(v, role, value);
    case TOKEN_TYPE.idToken:
      return idToken(v, role, value);
    case TOKEN_TYPE.jwt:
      return clientJwt(v, role, value);
    default:
      return { account: await clientOrgUser(v, role, value), aud: [] };
  }
}

/**
 * Whether a token was meant for the exchanging client: its audience names the client or the
 * client's project, or (ID tokens) its authorized party is the client. A client exchanges
 * what was issued to it, never a token it merely came across (a leaked ID token travels in
 * logout URLs and browser history).
 */
function meantFor(v: ExchangeVerifier, aud: string[], azp?: unknown): boolean {
  return aud.includes(v.client.clientId) || aud.includes(v.client.projectId) || azp === v.client.clientId;
}

/** An access token of either format, issued for this client or its project (as introspection requires). */
async function accessToken(v: ExchangeVerifier, role: string, value: string): Promise<ExchangeToken> {
  const record = await findAccessToken(value, async () => v.keys, { accessTokens: v.accessTokens, jwtRecords: v.jwtRecords });
  if (!record) throw invalid(role, "not an active access token of this instance");
  if (!meantFor(v, record.aud)) throw invalid(role, "the token was not issued for this client or its project");
  const account = await activeAccount(v.db, v.instanceId, record.accountId);
  if (!account) throw invalid(role, "its user or organization is not active");
  return { account, aud: record.aud, scopes: splitScope(record.scope), ...(isActor(record.act) && { act: record.act }) };
}

/**
 * An ID token signed by this instance's keys, not expired, naming this issuer, and issued to
 * the exchanging client (as access tokens must be): the exchanged token inherits its audience.
 */
async function idToken(v: ExchangeVerifier, role: string, value: string): Promise<ExchangeToken> {
  let header;
  try {
    header = decodeProtectedHeader(value);
  } catch {
    throw invalid(role, "not a JWT");
  }
  // Access tokens (at+jwt) and logout tokens are signed by the same keys; only ID tokens count.
  if (header.typ !== undefined && header.typ.toUpperCase() !== "JWT") throw invalid(role, `a JWT of type ${header.typ} is not an ID token`);
  const key = header.kid === undefined ? undefined : v.keys.publicKeys.get(header.kid);
  if (!key) throw invalid(role, "not signed by a key of this instance");
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(value, key.key, { algorithms: ["RS256", "ES256"], issuer: v.issuer, requiredClaims: ["sub", "aud", "exp", "iat"] }));
  } catch (error) {
    throw invalid(role, (error as Error).message);
  }
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud!];
  if (!meantFor(v, aud, payload.azp)) throw invalid(role, "the token was not issued for this client or its project");
  const account = await activeAccount(v.db, v.instanceId, payload.sub!);
  if (!account) throw invalid(role, "its user or organization is not active");
  return { account, aud, ...(isActor(payload.act) && { act: payload.act }) };
}

/**
 * A JWT the client signed with one of its keys (those of private_key_jwt) for a user:
 * `iss` the client, `sub` the user, `aud` this issuer or its token endpoint, valid for at
 * most an hour, each once (RFC 7523 section 3 rules, as for client assertions).
 */
async function clientJwt(v: ExchangeVerifier, role: string, value: string): Promise<ExchangeToken> {
  const app = await appParty(v.db, v.instanceId, v.client.clientId);
  if (!app || app.keys.length === 0) throw invalid(role, "the client has no keys to verify a JWT with (keys belong to PRIVATE_KEY_JWT applications)");
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(value).kid;
  } catch {
    throw invalid(role, "not a JWT");
  }
  const candidates = kid === undefined ? app.keys : app.keys.filter((k) => k.id === kid);
  let payload: JWTPayload | undefined;
  for (const key of candidates) {
    try {
      ({ payload } = await jwtVerify(value, createPublicKey(key.publicKey), {
        algorithms: ASSERTION_ALGORITHMS,
        issuer: v.client.clientId,
        audience: v.audiences,
        requiredClaims: ["sub", "exp"],
        clockTolerance: ASSERTION_CLOCK_TOLERANCE_S,
      }));
      break;
    } catch {
      continue;
    }
  }
  if (!payload) throw invalid(role, "not signed by a key of the client, or its iss, aud or exp are wrong");
  if (payload.exp! > Date.now() / 1000 + MAX_ASSERTION_LIFETIME_S + ASSERTION_CLOCK_TOLERANCE_S)
    throw invalid(role, `it must expire within ${MAX_ASSERTION_LIFETIME_S} seconds`);
  // Without a jti, the signature (the JWT's last part) stands for it.
  const jti = typeof payload.jti === "string" ? payload.jti : `sig:${value.slice(value.lastIndexOf(".") + 1)}`;
  if (!(await claimAssertion(v.db, v.instanceId, v.client.clientId, jti, payload.exp!))) throw invalid(role, "it was used before");
  return { account: await clientOrgUser(v, role, payload.sub!), aud: [] };
}

/**
 * A user named without the user's own proof (a user id, or a JWT of the client) may only be
 * one of the organization that enabled token exchange for its application: there are no
 * impersonation permissions yet to decide more finely.
 */
async function clientOrgUser(v: ExchangeVerifier, role: string, userId: string): Promise<Account> {
  const account = userId.length > 200 ? undefined : await activeAccount(v.db, v.instanceId, userId);
  if (!account) throw invalid(role, "no active user of this instance has that id");
  if (account.orgId !== v.client.orgId) throw invalid(role, "the user is not of the application's organization");
  return account;
}

function isActor(value: unknown): value is Actor {
  return typeof value === "object" && value !== null && typeof (value as Actor).sub === "string";
}
