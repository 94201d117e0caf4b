import type { Principal } from "../../domain/authz/principal.js";
import { principalOf } from "../../domain/pat/queries.js";
import type { Db } from "../../store/db.js";
import { activeAccount } from "../../domain/user/accounts.js";
import { payloadAdapters } from "../adapters/payload-adapter.js";
import { PLATFORM_AUDIENCE } from "./scopes.js";
import type { SigningKeys } from "../models/signing-keys.js";
import { JWT_RECORD_MODEL } from "../adapters/token-models.js";
import { findAccessToken } from "./tokens.js";

/**
 * The resource and settings APIs accept OpenID Connect access tokens beside personal access
 * tokens (spec section 5): JWTs verified against the instance's own keys, opaque ones
 * looked up, either one valid only while it is recorded (not revoked), for the audience
 * `platform` (scope urn:platform:iam:org:project:id:platform:aud), and for an active user
 * of an active organization. Keys and records are the instance's, so a token of one
 * instance is unknown to every other.
 */
export class AccessTokenPrincipals {
  constructor(private readonly keys: SigningKeys) {}

  async principal(db: Db, instanceId: string, token: string): Promise<{ principal: Principal; expires: number } | undefined> {
    const Payloads = payloadAdapters(() => db, instanceId);
    const record = await findAccessToken(token, () => this.keys.get(instanceId), {
      accessTokens: new Payloads("AccessToken"),
      jwtRecords: new Payloads(JWT_RECORD_MODEL),
    });
    if (!record || !record.aud.includes(PLATFORM_AUDIENCE)) return undefined;
    const account = await activeAccount(db, instanceId, record.accountId);
    if (!account) return undefined;
    return {
      principal: { ...(await principalOf(db, instanceId, account.userId, account.orgId)), client: `app:${record.clientId}` },
      expires: record.exp * 1000,
    };
  }
}
