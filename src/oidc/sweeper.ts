import type { Logger } from "../log/logger.js";
import type { Store } from "../store/database.js";
import { startSweeper } from "../store/sweeper.js";
import { sweepExpiredPayloads } from "./payload-adapter.js";

/**
 * Deletes expired OpenID Connect rows (codes, tokens, sessions, replay records) every
 * `intervalMs`, in small batches (store/sweeper.ts). Expired rows are already invisible to
 * every lookup; this only reclaims space.
 */
export function startPayloadSweeper(store: Pick<Store, "db">, logger: Logger, intervalMs: number): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs,
    logger,
    failure: "sweeping expired OpenID Connect rows failed; the next run tries again",
    sweepBatch: (limit) => sweepExpiredPayloads(store.db, new Date(), limit),
  });
}
