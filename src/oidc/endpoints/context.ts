import type { Db } from "../../store/eventstore.js";
import { tokenKey, JWT_RECORD_MODEL, findAccessToken, type AccessTokenRecord } from "../tokens.js";
import type { OidcAdapter } from "../payload-adapter.js";
import type { KeySet } from "../signing-keys.js";
import type { ClientAuthContext } from "./client-auth.js";

/** What our own endpoints of one request know: its instance, issuer, database and stores. */
export interface EndpointContext {
  db: Db;
  instanceId: string;
  issuer: string;
  keys: () => Promise<KeySet>;
  adapter: (model: string) => OidcAdapter;
  maxBodyBytes: number;
  /** Tells every process that cached decisions on tokens may be stale (a revocation). */
  accessChanged(): Promise<void>;
}

export function lookUpAccessToken(c: EndpointContext, value: string): Promise<AccessTokenRecord | undefined> {
  return findAccessToken(value, c.keys, { accessTokens: c.adapter("AccessToken"), jwtRecords: c.adapter(JWT_RECORD_MODEL) });
}

/** Ends an access token: its stored form (opaque) or its record (JWT) goes. */
export async function destroyAccessToken(c: EndpointContext, record: AccessTokenRecord): Promise<void> {
  await c.adapter(record.format === "jwt" ? JWT_RECORD_MODEL : "AccessToken").destroy(record.jti);
}

export function clientAuthContext(c: EndpointContext, endpointPath: string): ClientAuthContext {
  const replay = c.adapter("ReplayDetection");
  return {
    db: c.db,
    instanceId: c.instanceId,
    audiences: [c.issuer, new URL(endpointPath, c.issuer).href],
    async unique(clientId, jti, exp) {
      const id = tokenKey(`${clientId}:${jti}`);
      if (await replay.find(id)) return false;
      await replay.upsert(id, { iss: clientId, jti }, Math.max(1, exp - Math.floor(Date.now() / 1000)));
      return true;
    },
  };
}
