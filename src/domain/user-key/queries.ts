import type { Db } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";

/** A user's keys, public parts only, newest first unless asked otherwise. */
export async function searchUserKeys(db: Db, instanceId: string, user: { id: string; orgId: string }, page: Page) {
  const query = db.selectFrom("user_keys").where("instance_id", "=", instanceId).where("user_id", "=", user.id);
  const found = await searchPage(db, "user_key", instanceId, query, (q, direction) => q.orderBy("created_at", direction).orderBy("id", direction), page);
  return {
    ...found,
    rows: found.rows.map((row) => ({
      details: { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org" as const, id: user.orgId } },
      expiresAt: row.expires_at,
      publicKey: row.public_key,
      type: row.key_type,
    })),
  };
}
