import type { ActionFunctions } from "../../engines/actions/functions.js";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import type { Db } from "../../store/db.js";
import { JWT_RECORD_MODEL } from "../adapters/token-models.js";
import { findAccessToken, type AccessTokenRecord } from "../helpers/tokens.js";
import { claimAssertion, destroyGrantModels, type OidcAdapter } from "../adapters/payload-adapter.js";
import type { KeySet } from "../models/signing-keys.js";
import type { OidcLookups } from "../helpers/lookups.js";
import { destroyChain } from "../adapters/token-chains.js";
import type { ClientAuthContext } from "./client-auth.js";

/** What our own endpoints of one request know: its instance, issuer, database and stores. */
export interface EndpointContext {
  db: Db;
  instanceId: string;
  issuer: string;
  keys: () => Promise<KeySet>;
  /** The provider's models of the instance, ending tokens as the provider does (ended-tokens.ts). */
  adapter: (model: string) => OidcAdapter;
  maxBodyBytes: number;
  /** Clients and projects, cached until the next change of access. */
  lookups: OidcLookups;
  /** Action functions (preuserinfo) that may add claims to userinfo. */
  functions: ActionFunctions;
  /** Advanced when tokens end (ended-tokens.ts), so that no process keeps their principals. */
  access: AccessEpoch;
}

export function lookUpAccessToken(c: EndpointContext, value: string): Promise<AccessTokenRecord | undefined> {
  return findAccessToken(value, c.keys, { accessTokens: c.adapter("AccessToken"), jwtRecords: c.adapter(JWT_RECORD_MODEL) });
}

/** Ends an access token: its stored form (opaque) or its record (JWT) goes. */
export async function destroyAccessToken(c: EndpointContext, record: AccessTokenRecord): Promise<void> {
  await c.adapter(record.format === "jwt" ? JWT_RECORD_MODEL : "AccessToken").destroy(record.jti);
}

interface RefreshTokenRecord {
  jti: string;
  clientId: string;
  grantId?: string;
  /** Its refresh-token chain (token-chains.ts); absent for token exchange's, whose grant is its own. */
  chain?: string;
}

/** A refresh token that is valid now (not consumed by a rotation, not expired). */
export async function lookUpRefreshToken(c: EndpointContext, value: string): Promise<RefreshTokenRecord | undefined> {
  if (value.length > 200) return undefined;
  const stored = await c.adapter("RefreshToken").find(value);
  if (!stored || stored.kind !== "RefreshToken" || stored.jti !== value || stored.consumed) return undefined;
  if (!(Number(stored.exp) > Date.now() / 1000)) return undefined;
  return {
    jti: value,
    clientId: String(stored.clientId),
    ...(typeof stored.grantId === "string" && { grantId: stored.grantId }),
    ...(typeof stored.chain === "string" && { chain: stored.chain }),
  };
}

/**
 * Ends a refresh token and the access tokens issued from it: those of its chain (its code
 * exchange and rotations), or, for a token of no chain, those of its grant. The grant
 * (consent) and its other authorizations' tokens stay.
 */
export async function destroyRefreshToken(c: EndpointContext, token: RefreshTokenRecord): Promise<void> {
  if (token.grantId && token.chain) return destroyChain(c.db, c.instanceId, c.access, token.grantId, token.chain);
  await c.adapter("RefreshToken").destroy(token.jti);
  if (token.grantId) await destroyGrantModels(c.db, c.instanceId, c.access, token.grantId, ["AccessToken", JWT_RECORD_MODEL]);
}

export function clientAuthContext(c: EndpointContext, endpointPath: string): ClientAuthContext {
  return {
    db: c.db,
    instanceId: c.instanceId,
    audiences: [c.issuer, new URL(endpointPath, c.issuer).href],
    findParty: (clientId) => c.lookups.party(c.db, c.instanceId, clientId),
    unique: (clientId, jti, exp) => claimAssertion(c.db, c.instanceId, clientId, jti, exp),
  };
}
