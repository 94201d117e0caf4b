import { sql } from "kysely";
import type { Db } from "./db.js";

/**
 * Deletes up to `limit` finished rows (not pending) of an instance log beside the events
 * (event deliveries, notifications), of every instance, created longer ago than the
 * instance's audit log retention or, where it has none, `defaultRetentionMs`: what the log
 * no longer shows. Pending rows stay, however old (a retry made them pending: they stay
 * until done). Each instance's rows are read through the log's index (instance, creation),
 * so a run costs what it deletes, not the table's size. Rows locked by a retry are skipped,
 * and the status is checked again on the row deleted, so a row just made pending is never lost.
 */
export async function sweepFinishedLogRows(db: Db, table: "action_deliveries" | "notifications", defaultRetentionMs: number, limit: number): Promise<number> {
  const result = await sql`
    delete from ${sql.table(table)}
    where status <> 'pending' and (instance_id, id) in (
      select old.instance_id, old.id from instances i
      cross join lateral (
        select d.instance_id, d.id from ${sql.table(table)} d
        where d.instance_id = i.id
          and d.created_at < now() - coalesce(i.audit_log_retention_ms, ${defaultRetentionMs}) * interval '1 millisecond'
          and d.status <> 'pending'
        order by d.created_at
        limit ${limit}
        for update of d skip locked) old
      limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
