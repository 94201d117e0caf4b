import type { Logger } from "../log/logger.js";
import type { Store } from "../store/database.js";
import { sweepExpiredPayloads } from "./payload-adapter.js";

const BATCH = 1000;
/** A run stops after this many full batches; the next run continues. */
const MAX_BATCHES = 20;

/**
 * Deletes expired OpenID Connect rows (codes, tokens, sessions, replay records) every
 * `intervalMs`, in small batches so that no run holds locks for long. Expired rows are
 * already invisible to every lookup; this only reclaims space. Any number of processes may
 * sweep at once: they delete disjoint or already deleted rows.
 */
export function startPayloadSweeper(store: Pick<Store, "db">, logger: Logger, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    try {
      for (let i = 0; i < MAX_BATCHES; i++) {
        if ((await sweepExpiredPayloads(store.db, new Date(), BATCH)) < BATCH) break;
      }
    } catch (error) {
      logger.warn({ err: error }, "sweeping expired OpenID Connect rows failed; the next run tries again");
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
