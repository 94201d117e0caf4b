import { sql } from "kysely";
import type { QueueSettings } from "../../../config/queues.js";
import type { Logger } from "../../../log/logger.js";
import type { Store } from "../../../store/database.js";
import type { Db } from "../../../store/db.js";
import { startSweeper } from "../../../store/sweeper.js";
import { messages } from "./queue.js";

/**
 * Wipes the sealed content (codes) of up to `limit` failed messages past their expiry: they
 * can no longer be retried, and a code is kept no longer than it could be used.
 */
async function wipeExpiredContent(db: Db, limit: number): Promise<number> {
  const result = await sql`
    update notifications set sealed_data = null
    where (instance_id, id) in (
      select instance_id, id from notifications
      where status = 'failed' and sealed_data is not null and expires_at < now()
      limit ${limit}
      for update skip locked)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Every `sweepIntervalMs`: the content of expired failed messages goes, and finished
 * messages past the instance's audit log retention (or `retentionMs`) leave the log.
 */
export function startNotificationSweep(
  store: Pick<Store, "db">,
  logger: Logger,
  settings: Pick<QueueSettings, "retentionMs" | "sweepIntervalMs">,
): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs: settings.sweepIntervalMs,
    logger,
    failure: "sweeping old notifications failed; the next run tries again",
    sweepBatch: async (limit) => Math.max(await wipeExpiredContent(store.db, limit), await messages.sweepFinished(store.db, settings.retentionMs, limit)),
  });
}
