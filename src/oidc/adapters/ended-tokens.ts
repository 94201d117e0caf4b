import { sql, type DeleteQueryBuilder, type DeleteResult } from "kysely";
import { ACCESS_CHANNEL, type AccessEpoch } from "../../cache/access-epoch.js";
import type { Db } from "../../store/db.js";
import type { Database } from "../../store/schema.js";
import { ACCESS_TOKEN_MODELS } from "./token-models.js";

export type PayloadDeletion = DeleteQueryBuilder<Database, "oidc_payloads", DeleteResult>;

/**
 * Deletes the rows of one instance's provider models that `which` selects: the one way a
 * token goes before it expires, whoever ends it — the provider (destroy, and revocation by
 * grant: end session, a rotated refresh token or a redeemed code used again) or our
 * revocation endpoint. When access tokens were among the rows, a principal cached for one
 * (rpc/interceptors/authentication.ts) must go with them: the same statement notifies every
 * process, so that no delete commits without its NOTIFY (two statements would leave the
 * other processes a stale principal whenever the request was aborted between them), and this
 * process advances its epoch once it returns. Only callers that never delete an access token
 * may go without `access`: adapters that read tokens, or keep records of our own. The sweep
 * of expired rows is no such end: an expired token is refused, cached or not.
 */
export async function deletePayloads(
  db: Db,
  instanceId: string,
  access: AccessEpoch | undefined,
  which: (rows: PayloadDeletion) => PayloadDeletion,
): Promise<void> {
  const notified = await db
    .with("deleted", (q) => which(q.deleteFrom("oidc_payloads").where("instance_id", "=", instanceId)).returning("model"))
    .selectFrom("deleted")
    .select(sql`pg_notify(${ACCESS_CHANNEL}, '')`.as("notified"))
    .where("model", "in", ACCESS_TOKEN_MODELS)
    .limit(1)
    .executeTakeFirst();
  if (notified) access?.advance();
}
