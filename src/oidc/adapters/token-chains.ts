import { sql } from "kysely";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { hashToken } from "../../crypto/tokens.js";
import type { Db } from "../../store/db.js";
import { deletePayloads } from "./ended-tokens.js";
import { JWT_RECORD_MODEL } from "./token-models.js";
import { CHAIN_EXTRA } from "../helpers/tokens.js";

/**
 * Refresh-token chains: the refresh token of one authorization code exchange, its rotations,
 * and the access tokens issued with each of them. The provider keeps one grant per client
 * and browser session, so two authorizations of a client in one session share a grant; the
 * spec's revocation ends a refresh token and its own access tokens only, which a revocation
 * by grant would overshoot. The chain's id is the SHA-256 of the code that started it.
 */

type ChainEntities = { AuthorizationCode?: { jti?: string }; RotatedRefreshToken?: { chain?: string } };

/**
 * The chain of what a token request issues: the rotated refresh token's at a refresh, a new
 * one at a code exchange; none for the other grants (implicit, token exchange, machines) or
 * for a refresh token issued before chains were kept.
 */
export function chainOf(ctx: KoaContextWithOIDC | undefined): string | undefined {
  const entities = ctx?.oidc?.entities as ChainEntities | undefined;
  if (entities?.RotatedRefreshToken) return entities.RotatedRefreshToken.chain;
  const code = entities?.AuthorizationCode?.jti;
  return code ? hashToken(code) : undefined;
}

/**
 * Refresh tokens of this provider keep their chain: stored with them (`chain` beside the
 * provider's properties) and set when they are saved, from the request that issues them.
 * The class is this provider's own, so no other instance's tokens change.
 */
export function keepRefreshTokenChains(provider: Provider): void {
  const RefreshToken = provider.RefreshToken as unknown as { IN_PAYLOAD: string[]; prototype: { chain?: string; save(...args: unknown[]): Promise<string> } };
  const properties = [...RefreshToken.IN_PAYLOAD, "chain"];
  Object.defineProperty(RefreshToken, "IN_PAYLOAD", { get: () => properties });
  const save = RefreshToken.prototype.save;
  RefreshToken.prototype.save = function (this: { chain?: string }, ...args: unknown[]) {
    this.chain ??= chainOf(Provider.ctx);
    return save.apply(this, args);
  };
}

/** Deletes a chain's refresh tokens (rotated ones too) and its access tokens of either format. */
export function destroyChain(db: Db, instanceId: string, access: AccessEpoch, grantId: string, chain: string): Promise<void> {
  return deletePayloads(db, instanceId, access, (rows) =>
    rows
      .where("grant_id", "=", grantId)
      .where("model", "in", ["RefreshToken", "AccessToken", JWT_RECORD_MODEL])
      .where(sql<boolean>`coalesce(payload->>'chain', payload->'extra'->>${CHAIN_EXTRA}) = ${chain}`),
  );
}
