import { sql } from "kysely";
import type { Db } from "../../store/db.js";

/**
 * Stores an interaction's payload with its result, only while it has none: of two
 * finalizations racing, one wins. False when another had already finished it.
 */
export async function storeResultOnce(db: Db, instanceId: string, model: string, id: string, payload: object): Promise<boolean> {
  const finished = await db
    .updateTable("oidc_payloads")
    .set({ payload: JSON.stringify(payload) })
    .where("instance_id", "=", instanceId)
    .where("model", "=", model)
    .where("id", "=", id)
    .where(sql<boolean>`payload->'result' is null`)
    .executeTakeFirst();
  return Number(finished.numUpdatedRows) > 0;
}
