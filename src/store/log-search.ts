import type { Selectable, SelectQueryBuilder } from "kysely";
import type { Db } from "./db.js";
import type { Database } from "./schema.js";
import type { Found, Page } from "./search.js";

/** The logs an instance keeps beside its events: written with them, read by creation date. */
type LogTable = "action_deliveries" | "notifications";

/**
 * How far back an instance's logs are shown: its audit log retention, when set (what is
 * older is not shown, as for the events themselves). Undefined: all of it.
 */
export async function retentionFloor(db: Db, instanceId: string, now = new Date()): Promise<Date | undefined> {
  const instance = await db.selectFrom("instances").select("audit_log_retention_ms").where("id", "=", instanceId).executeTakeFirst();
  return instance?.audit_log_retention_ms ? new Date(now.getTime() - Number(instance.audit_log_retention_ms)) : undefined;
}

/**
 * One page of an instance's log (`filtered` is already scoped to it and filtered), by
 * creation date (ties by id), with the total of all matches. `state` is the instance's
 * newest event: log rows are written with their events, so the log is complete up to it.
 */
export async function logPage<TB extends LogTable>(
  db: Db,
  instanceId: string,
  filtered: SelectQueryBuilder<Database, TB, object>,
  page: Page,
): Promise<Found<Selectable<Database[TB]>>> {
  const direction = page.asc ? "asc" : "desc";
  const query = filtered as unknown as SelectQueryBuilder<Database, LogTable, object>;
  const [rows, newest] = await Promise.all([
    query
      .selectAll()
      .select((eb) => eb.fn.countAll<number>().over().as("total"))
      .orderBy("created_at", direction)
      .orderBy("id", direction)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom("events")
      .select(["instance_position", "created_at"])
      .where("instance_id", "=", instanceId)
      .orderBy("instance_position", "desc")
      .limit(1)
      .executeTakeFirst(),
  ]);
  const state = { position: newest?.instance_position ?? 0, timestamp: newest?.created_at };
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (rows.length === 0 && page.offset > 0) total = Number((await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
  return { rows: rows.map(({ total: _, ...row }) => row) as unknown as Selectable<Database[TB]>[], total, state };
}
