import { decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import type { OidcAdapter, OidcPayload } from "../adapters/payload-adapter.js";
import type { KeySet } from "../models/signing-keys.js";

/** What is known of an issued access token, whichever its format. */
export interface AccessTokenRecord {
  jti: string;
  /** The user the token acts for. */
  accountId: string;
  clientId: string;
  scope: string;
  aud: string[];
  iat: number;
  exp: number;
  format: "jwt" | "opaque";
  /** The grant type it was issued by. */
  gty?: string;
  grantId?: string;
  /** The browser session it belongs to, if any. */
  sessionUid?: string;
  /** RFC 8693 section 4.1: the actor of an impersonation (token exchange). */
  act?: Record<string, unknown>;
}

/** Where an opaque token's audience list is kept (the provider's own `aud` holds one value). */
export const AUDIENCE_EXTRA = "urn:platform:aud";

/**
 * Where an opaque token keeps its refresh-token chain (token-chains.ts); a JWT's record keeps
 * it as `chain`, and the JWT does not carry it.
 */
export const CHAIN_EXTRA = "urn:platform:chain";

/** The record of a JWT access token, written when it is signed (configuration.ts), with its refresh-token chain. */
export function jwtRecord(
  payload: Record<string, unknown>,
  token: { grantId?: string; sessionUid?: string; gty?: string; accountId?: string; extra?: Record<string, unknown> },
): OidcPayload {
  const chain = token.extra?.[CHAIN_EXTRA];
  return {
    jti: payload.jti,
    accountId: token.accountId,
    clientId: payload.client_id,
    scope: payload.scope ?? "",
    aud: payload.aud,
    iat: payload.iat,
    exp: payload.exp,
    format: "jwt",
    gty: token.gty,
    ...(token.grantId && { grantId: token.grantId }),
    ...(token.sessionUid && { sessionUid: token.sessionUid }),
    ...(typeof chain === "string" && { chain }),
    ...(payload.act !== undefined && { act: payload.act }),
  };
}

function looksLikeJwt(value: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value);
}

const ALGORITHMS = ["RS256", "ES256"];

/**
 * The JWT access token's claims when one of the instance's keys signed it and it has not
 * expired; undefined otherwise. ID tokens and other JWTs (typ other than at+jwt) are refused.
 */
async function verifyJwtAccessToken(value: string, keys: KeySet, clockToleranceS = 0): Promise<JWTPayload | undefined> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(value).kid;
  } catch {
    return undefined;
  }
  const key = kid === undefined ? undefined : keys.publicKeys.get(kid);
  if (!key) return undefined;
  try {
    const { payload } = await jwtVerify(value, key.key, { algorithms: ALGORITHMS, typ: "at+jwt", clockTolerance: clockToleranceS });
    return typeof payload.jti === "string" ? payload : undefined;
  } catch {
    return undefined;
  }
}

/** The stored record of an access token of either format, if it is valid now. */
export async function findAccessToken(
  value: string,
  keys: () => Promise<KeySet>,
  adapters: { accessTokens: OidcAdapter; jwtRecords: OidcAdapter },
): Promise<AccessTokenRecord | undefined> {
  let stored: OidcPayload | undefined;
  if (looksLikeJwt(value)) {
    const claims = await verifyJwtAccessToken(value, await keys());
    if (!claims) return undefined;
    stored = await adapters.jwtRecords.find(claims.jti!);
  } else {
    if (value.length > 200) return undefined;
    stored = await adapters.accessTokens.find(value);
    if (stored && (stored.kind !== "AccessToken" || stored.jti !== value)) return undefined;
  }
  if (!stored || typeof stored.accountId !== "string" || stored.consumed) return undefined;
  const exp = Number(stored.exp);
  if (!(exp > Date.now() / 1000)) return undefined;
  return {
    jti: String(stored.jti),
    accountId: stored.accountId,
    clientId: String(stored.clientId),
    scope: typeof stored.scope === "string" ? stored.scope : "",
    aud: audienceOf(stored),
    iat: Number(stored.iat),
    exp,
    format: stored.format === "jwt" ? "jwt" : "opaque",
    ...(typeof stored.gty === "string" && { gty: stored.gty }),
    ...(typeof stored.grantId === "string" && { grantId: stored.grantId }),
    ...(typeof stored.sessionUid === "string" && { sessionUid: stored.sessionUid }),
    ...(actOf(stored) && { act: actOf(stored) }),
  };
}

/** The actor: the JWT record's, or the one kept in an opaque token's extra claims. */
function actOf(stored: OidcPayload): Record<string, unknown> | undefined {
  const act = stored.act ?? (stored.extra as Record<string, unknown> | undefined)?.act;
  return typeof act === "object" && act !== null ? (act as Record<string, unknown>) : undefined;
}

/** The audience list: the record's (JWT), or the one kept beside the provider's single value (opaque). */
function audienceOf(stored: OidcPayload): string[] {
  const extra = (stored.extra as Record<string, unknown> | undefined)?.[AUDIENCE_EXTRA];
  const aud = Array.isArray(extra) ? extra : stored.aud;
  return Array.isArray(aud) ? (aud as string[]) : typeof aud === "string" ? [aud] : [];
}
