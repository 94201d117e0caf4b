import { sql } from "kysely";
import type { DeliverySettings } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import type { Db } from "../store/eventstore.js";
import type { Store } from "../store/database.js";
import { startSweeper } from "../store/sweeper.js";

/**
 * Deletes up to `limit` delivered or failed deliveries, of every instance, created longer
 * ago than the instance's audit log retention or, where it has none, `defaultRetentionMs`:
 * what the delivery log no longer shows. Pending ones stay, however old (a RetryDelivery of
 * an old row made it pending: it stays until it is done). Each instance's rows are read
 * through the log's index (instance, creation), so a run costs what it deletes, not the
 * table's size. Rows locked by a RetryDelivery are skipped, and the status is checked
 * again on the row deleted, so a row just made pending is never lost.
 */
export async function sweepFinishedDeliveries(db: Db, defaultRetentionMs: number, limit: number): Promise<number> {
  const result = await sql`
    delete from action_deliveries
    where status <> 'pending' and (instance_id, id) in (
      select old.instance_id, old.id from instances i
      cross join lateral (
        select d.instance_id, d.id from action_deliveries d
        where d.instance_id = i.id
          and d.created_at < now() - coalesce(i.audit_log_retention_ms, ${defaultRetentionMs}) * interval '1 millisecond'
          and d.status <> 'pending'
        order by d.created_at
        limit ${limit}
        for update of d skip locked) old
      limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Removes old finished deliveries every `sweepIntervalMs` (store/sweeper.ts). */
export function startDeliveryRetention(store: Pick<Store, "db">, logger: Logger, settings: Pick<DeliverySettings, "retentionMs" | "sweepIntervalMs">): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs: settings.sweepIntervalMs,
    logger,
    failure: "removing old event deliveries failed; the next run tries again",
    sweepBatch: (limit) => sweepFinishedDeliveries(store.db, settings.retentionMs, limit),
  });
}
