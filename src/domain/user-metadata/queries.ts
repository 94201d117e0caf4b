import type { Db } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";
import { notFound } from "../errors.js";

export interface MetadataView {
  key: string;
  value: Uint8Array;
  changeDate: Date;
}

export async function getUserMetadata(db: Db, instanceId: string, userId: string, key: string): Promise<MetadataView> {
  const row = await db
    .selectFrom("user_metadata")
    .select(["key", "value", "change_date"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("key", "=", key)
    .executeTakeFirst();
  if (!row) throw notFound(`user ${userId} has no metadata "${key}"`);
  return { key: row.key, value: row.value, changeDate: row.change_date };
}

/** One page by key, with the total; metadata changes are events of the user aggregate. */
export async function searchUserMetadata(db: Db, instanceId: string, userId: string, page: Page) {
  const query = db.selectFrom("user_metadata").where("instance_id", "=", instanceId).where("user_id", "=", userId);
  const found = await searchPage(db, "user", instanceId, query, (q, direction) => q.orderBy("key", direction), page);
  return { ...found, rows: found.rows.map((r) => ({ key: r.key, value: r.value, changeDate: r.change_date })) };
}

/** Every key of a user, for action functions (bounded by what SetMetadata allows to accumulate). */
export async function allUserMetadata(db: Db, instanceId: string, userId: string): Promise<MetadataView[]> {
  const rows = await db
    .selectFrom("user_metadata")
    .select(["key", "value", "change_date"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .orderBy("key")
    .execute();
  return rows.map((r) => ({ key: r.key, value: r.value, changeDate: r.change_date }));
}
