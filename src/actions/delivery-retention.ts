import type { QueueSettings } from "../config/queues.js";
import type { Logger } from "../log/logger.js";
import type { Store } from "../store/database.js";
import { sweepFinishedLogRows } from "../store/log-retention.js";
import { startSweeper } from "../store/sweeper.js";

/** Removes finished deliveries past their retention every `sweepIntervalMs` (store/log-retention.ts, store/sweeper.ts). */
export function startDeliveryRetention(store: Pick<Store, "db">, logger: Logger, settings: Pick<QueueSettings, "retentionMs" | "sweepIntervalMs">): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs: settings.sweepIntervalMs,
    logger,
    failure: "removing old event deliveries failed; the next run tries again",
    sweepBatch: (limit) => sweepFinishedLogRows(store.db, "action_deliveries", settings.retentionMs, limit),
  });
}
