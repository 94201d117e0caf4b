import type { Logger } from "../../log/logger.js";
import type { Store } from "../../store/database.js";
import { deleteExpired, startSweeper } from "../../store/sweeper.js";
import { sweepExpiredPayloads } from "./payload-adapter.js";
import { sweepExpiredSessions } from "../../domain/session/sweep.js";

/**
 * Deletes expired OpenID Connect rows (codes, tokens, sessions, replay records), expired
 * sessions of the session API and expired identity provider intents every `intervalMs`, in
 * small batches (store/sweeper.ts). Expired rows are already refused by every use; this
 * reclaims space, and for intents drops what a provider said of a person.
 */
export function startPayloadSweeper(store: Pick<Store, "db">, logger: Logger, intervalMs: number): { stop(): Promise<void> } {
  return startSweeper({
    intervalMs,
    logger,
    failure: "sweeping expired OpenID Connect rows failed; the next run tries again",
    sweepBatch: async (limit) => {
      const now = new Date();
      // A full batch of any asks for another run at once.
      const swept = [
        await sweepExpiredPayloads(store.db, now, limit),
        await sweepExpiredSessions(store.db, now, limit),
        await deleteExpired(store.db, "idp_intents", now, limit),
      ];
      return Math.max(...swept);
    },
  });
}
