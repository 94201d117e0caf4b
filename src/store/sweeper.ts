import { sql } from "kysely";
import type { Logger } from "../log/logger.js";
import type { Db } from "./db.js";

/** Rows one statement deletes at most: short row locks and little WAL per statement. */
const SWEEP_BATCH = 1000;
/** A run stops after this many full batches; the next run continues. */
const MAX_BATCHES = 20;

/**
 * Runs `sweepBatch` every `intervalMs`, again at once while it deletes a full batch, so that
 * no statement holds locks for long and no run goes on unbounded. A run still going when the
 * next is due is not doubled. Any number of processes may sweep at once: they delete
 * disjoint or already deleted rows. A failed run is logged; the next one tries again.
 */
export function startSweeper(opts: {
  intervalMs: number;
  logger: Logger;
  /** Logged when a run fails. */
  failure: string;
  /** Deletes up to `limit` rows; returns how many it deleted. */
  sweepBatch(limit: number): Promise<number>;
}): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    try {
      for (let i = 0; i < MAX_BATCHES; i++) {
        if ((await opts.sweepBatch(SWEEP_BATCH)) < SWEEP_BATCH) break;
      }
    } catch (error) {
      opts.logger.warn({ err: error }, opts.failure);
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => (running = undefined));
  }, opts.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Deletes up to `limit` rows of a table keyed by instance and id whose `expires_at` has passed; returns how many. */
export async function deleteExpired(db: Db, table: "sessions" | "idp_intents", now: Date, limit: number): Promise<number> {
  const expired = db.selectFrom(table).select(["instance_id", "id"]).where("expires_at", "<=", now).limit(limit);
  const result = await db
    .deleteFrom(table)
    .where(sql<boolean>`(instance_id, id) in (${expired})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
