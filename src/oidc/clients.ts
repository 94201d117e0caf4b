import { timingSafeEqual } from "node:crypto";
import { hashToken } from "../crypto/tokens.js";
import type { Db } from "../store/eventstore.js";
import { machineParty, type MachineParty } from "./parties.js";
import type { OidcAdapter, OidcPayload } from "./payload-adapter.js";
import { isJwtBearerRequest, scopedDb } from "./request-scope.js";

export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** Client metadata of ours the provider carries along (extraClientMetadata). */
export const PARTY_METADATA = ["platform_user_id", "platform_org_id", "platform_access_token_type"] as const;

/**
 * The provider's clients, read from our tables on each lookup (the provider caches the
 * built client by its metadata). Machine users are clients for the client_credentials grant
 * by username, with their hashed secret, and for the jwt-bearer grant by id, without one:
 * the assertion they sign is their authentication.
 */
export function clientAdapter(db: Db, instanceId: string): OidcAdapter {
  const refuse = async () => {
    throw new Error("clients are managed through PlatformApps and PlatformUsers");
  };
  return {
    async find(id: string) {
      if (id.length > 200) return undefined;
      const jwtBearer = isJwtBearerRequest();
      const party = await machineParty(scopedDb(db), instanceId, jwtBearer ? { userId: id } : { username: id });
      if (!party) return undefined;
      if (jwtBearer) return party.keys.length > 0 ? metadata(party, { grant_types: [JWT_BEARER], token_endpoint_auth_method: "none" }) : undefined;
      return party.secretHash ? metadata(party, { grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic", client_secret: party.secretHash }) : undefined;
    },
    findByUid: async () => undefined,
    findByUserCode: async () => undefined,
    upsert: refuse,
    consume: refuse,
    destroy: refuse,
    revokeByGrantId: refuse,
  };
}

function metadata(party: MachineParty, grant: Record<string, unknown>): OidcPayload {
  return {
    client_id: party.clientId,
    redirect_uris: [],
    response_types: [],
    ...grant,
    platform_user_id: party.userId,
    platform_org_id: party.orgId,
    platform_access_token_type: party.accessTokenType,
  };
}

/**
 * Client secrets are stored as SHA-256 hashes (they are random, so a fast hash suffices; see
 * crypto/tokens.ts); the provider's client holds the hash, and this compares against it.
 */
export function secretMatches(storedHash: string | null | undefined, presented: string | undefined): boolean {
  if (!storedHash || !presented) return false;
  const a = Buffer.from(hashToken(presented));
  const b = Buffer.from(storedHash);
  return a.length === b.length && timingSafeEqual(a, b);
}
