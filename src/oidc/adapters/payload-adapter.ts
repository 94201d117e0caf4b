import { sql } from "kysely";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { hashToken } from "../../crypto/tokens.js";
import type { Db } from "../../store/db.js";
import { deletePayloads } from "./ended-tokens.js";

/** What node-oidc-provider hands an adapter to keep: its own JSON, with a few properties we index. */
export interface OidcPayload {
  [property: string]: unknown;
  grantId?: string;
  uid?: string;
  userCode?: string;
  /** Set on what `find` returns once the model was consumed (seconds since the epoch). */
  consumed?: number;
}

/** The adapter contract of node-oidc-provider (its example/my_adapter.js), one instance per model. */
export interface OidcAdapter {
  upsert(id: string, payload: OidcPayload, expiresIn: number): Promise<void>;
  find(id: string): Promise<OidcPayload | undefined>;
  findByUid(uid: string): Promise<OidcPayload | undefined>;
  findByUserCode(userCode: string): Promise<OidcPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * Every model of one instance's provider in one table (`oidc_payloads`), so that any process
 * of a cluster can continue any flow: a code issued by one process is redeemed at another.
 * Each statement is scoped to the instance. Rows past their expiry are invisible at once and
 * deleted by `sweepExpiredPayloads`; rows destroyed or revoked before go through
 * `deletePayloads` (ended-tokens.ts), which advances `access` when access tokens went.
 */
export function payloadAdapters(db: () => Db, instanceId: string, access?: AccessEpoch): new (model: string) => OidcAdapter {
  return class PayloadAdapter implements OidcAdapter {
    constructor(private readonly model: string) {}

    private rows() {
      return db()
        .selectFrom("oidc_payloads")
        .select(["payload", "consumed_at"])
        .where("instance_id", "=", instanceId)
        .where("model", "=", this.model)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", new Date())]));
    }

    async upsert(id: string, payload: OidcPayload, expiresIn: number): Promise<void> {
      // A new version of a model replaces the old one whole, consumption included, as the
      // provider's own in-memory adapter does.
      const values = {
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
        consumed_at: null,
      };
      await db()
        .insertInto("oidc_payloads")
        .values({ instance_id: instanceId, model: this.model, id, ...values })
        .onConflict((oc) => oc.columns(["instance_id", "model", "id"]).doUpdateSet(values))
        .execute();
    }

    find(id: string) {
      return this.first(this.rows().where("id", "=", id));
    }

    findByUid(uid: string) {
      return this.first(this.rows().where("uid", "=", uid));
    }

    findByUserCode(userCode: string) {
      return this.first(this.rows().where("user_code", "=", userCode));
    }

    private async first(query: ReturnType<PayloadAdapter["rows"]>): Promise<OidcPayload | undefined> {
      const row = await query.executeTakeFirst();
      if (!row) return undefined;
      const payload = row.payload as OidcPayload;
      return row.consumed_at ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : payload;
    }

    async consume(id: string): Promise<void> {
      await db()
        .updateTable("oidc_payloads")
        .set({ consumed_at: new Date() })
        .where("instance_id", "=", instanceId)
        .where("model", "=", this.model)
        .where("id", "=", id)
        .execute();
    }

    destroy(id: string): Promise<void> {
      return deletePayloads(db(), instanceId, access, (rows) => rows.where("model", "=", this.model).where("id", "=", id));
    }

    revokeByGrantId(grantId: string): Promise<void> {
      // Every model of the grant (codes, access and refresh tokens), not only this adapter's;
      // not an interaction that merely started with the grant: when a login switches the
      // browser to another account, the provider ends the old session (revoking its grants)
      // and then resumes that very interaction.
      return deletePayloads(db(), instanceId, access, (rows) => rows.where("grant_id", "=", grantId).where("model", "!=", "Interaction"));
    }
  };
}

/**
 * Records an assertion's `jti` for its issuer until it expires; false when it was seen
 * before. One statement claims it (a find, then an upsert, would let concurrent requests
 * with the same assertion all pass): a new row, or the row of an expired one, is ours.
 */
export async function claimAssertion(db: Db, instanceId: string, issuer: string, jti: string, exp: number): Promise<boolean> {
  const now = new Date();
  const values = {
    payload: JSON.stringify({ iss: issuer, jti }),
    grant_id: null,
    uid: null,
    user_code: null,
    expires_at: new Date(Math.max(exp * 1000, now.getTime() + 1000)),
    consumed_at: null,
  };
  const id = hashToken(`${issuer}:${jti}`);
  const claimed = await db
    .insertInto("oidc_payloads")
    .values({ instance_id: instanceId, model: "ReplayDetection", id, ...values })
    .onConflict((oc) => oc.columns(["instance_id", "model", "id"]).doUpdateSet(values).where("oidc_payloads.expires_at", "<=", now))
    .returning("id")
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Deletes the given models of a grant (its access tokens, say), leaving the others. */
export function destroyGrantModels(db: Db, instanceId: string, access: AccessEpoch, grantId: string, models: string[]): Promise<void> {
  return deletePayloads(db, instanceId, access, (rows) => rows.where("grant_id", "=", grantId).where("model", "in", models));
}

/**
 * Deletes up to `limit` rows that expired before `now`, of every instance; returns how many.
 * Not through `deletePayloads`: an expired token is refused already, so no cache changes.
 */
export async function sweepExpiredPayloads(db: Db, now: Date, limit: number): Promise<number> {
  const expired = db.selectFrom("oidc_payloads").select(["instance_id", "model", "id"]).where("expires_at", "<=", now).limit(limit);
  const result = await db
    .deleteFrom("oidc_payloads")
    .where(sql<boolean>`(instance_id, model, id) in (${expired})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
