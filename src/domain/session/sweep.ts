import { sql } from "kysely";
import type { Db } from "../../store/eventstore.js";

/** Deletes up to `limit` sessions whose lifetime ended: nothing can use them any more. */
export async function sweepExpiredSessions(db: Db, now: Date, limit: number): Promise<number> {
  const expired = db.selectFrom("sessions").select(["instance_id", "id"]).where("expires_at", "<=", now).limit(limit);
  const result = await db
    .deleteFrom("sessions")
    .where(sql<boolean>`(instance_id, id) in (${expired})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
