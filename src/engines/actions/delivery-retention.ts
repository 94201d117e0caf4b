import type { QueueSettings } from "../../config/queues.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../../store/database.js";
import { startSweeper } from "../../store/sweeper.js";
import { deliveries } from "./delivery-queue.js";

/** Removes finished deliveries past their retention every `sweepIntervalMs` (queue/outbox-table.ts, store/sweeper.ts). */
export function startDeliveryRetention(
  store: Pick<Store, "db">,
  logger: Logger,
  settings: Pick<QueueSettings, "retentionMs" | "sweepIntervalMs">,
): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs: settings.sweepIntervalMs,
    logger,
    failure: "removing old event deliveries failed; the next run tries again",
    sweepBatch: (limit) => deliveries.sweepFinished(store.db, settings.retentionMs, limit),
  });
}
