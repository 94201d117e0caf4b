import type { Tx } from "../../store/db.js";
import { deferStatement } from "../../store/deferred.js";
import { searchableValues, type JsonObject } from "./fields.js";

/** A user's searchable fields' values, as the index keeps them. */
export type SearchValues = { field: string; value: string }[];

/**
 * Replaces the user's indexed values with the data's (the user_search_values table, migration
 * 0033). A new user has none to replace, and nothing reads the insert's answer: it goes with
 * the transaction's next statement (store/deferred.ts).
 */
export async function storeSearchValues(tx: Tx, instanceId: string, userId: string, values: SearchValues, isNew = false): Promise<void> {
  if (!isNew) await tx.deleteFrom("user_search_values").where("instance_id", "=", instanceId).where("user_id", "=", userId).execute();
  if (values.length > 0) {
    const rows = values.map((v) => ({ instance_id: instanceId, user_id: userId, field: v.field, value: v.value }));
    await deferStatement(tx, tx.insertInto("user_search_values").values(rows));
  }
}

/** Index rows written per statement when a schema's users are indexed again. */
const REINDEX_BATCH = 1000;

/**
 * Indexes a schema's users again after its searchable fields changed: a field newly marked
 * is found in every user's data at once, one no longer marked is no longer searched. In the
 * schema's transaction, so that no search sees half of it.
 */
export async function reindexSchemaUsers(tx: Tx, instanceId: string, schemaId: string, schema: Record<string, unknown>): Promise<void> {
  const users = tx.selectFrom("users").select("id").where("instance_id", "=", instanceId).where("schema_id", "=", schemaId);
  await tx.deleteFrom("user_search_values").where("instance_id", "=", instanceId).where("user_id", "in", users).execute();
  const rows = (await users.select("data").execute()).flatMap((u) =>
    searchableValues(schema, (u.data ?? {}) as JsonObject).map((v) => ({ instance_id: instanceId, user_id: u.id, field: v.field, value: v.value })),
  );
  for (let start = 0; start < rows.length; start += REINDEX_BATCH) {
    await tx
      .insertInto("user_search_values")
      .values(rows.slice(start, start + REINDEX_BATCH))
      .execute();
  }
}
