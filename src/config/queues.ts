import { duration, HOUR_MS, integer, TEN_YEARS_MS } from "./env.js";

/**
 * How an engine works its outbox (queue/claim-loop.ts, queue/outbox-table.ts). Every engine
 * reads the same five variables under its own prefix: `<prefix>_MAX_AGE`, `_POLL_INTERVAL`,
 * `_CONCURRENCY`, `_RETENTION` and `_SWEEP_INTERVAL` (README.md).
 */
export interface QueueSettings {
  /** A row not done this long after it was written (or retried by hand) fails for good. */
  maxAgeMs: number;
  /** How long an idle worker waits before looking for due rows again. */
  pollIntervalMs: number;
  /** Rows in flight at once per process. */
  concurrency: number;
  /** Done and failed rows leave the log this long after they were written, unless the instance's audit log retention says otherwise. */
  retentionMs: number;
  /** How often each process sweeps the log. */
  sweepIntervalMs: number;
}

export function queueSettings(env: NodeJS.ProcessEnv, prefix: string, maxAge: string): QueueSettings {
  return {
    maxAgeMs: duration(env, `${prefix}_MAX_AGE`, maxAge, 720 * HOUR_MS),
    pollIntervalMs: duration(env, `${prefix}_POLL_INTERVAL`, "1s", HOUR_MS, 10),
    concurrency: integer(env, `${prefix}_CONCURRENCY`, 10, 1, 1000),
    retentionMs: duration(env, `${prefix}_RETENTION`, "720h", TEN_YEARS_MS),
    sweepIntervalMs: duration(env, `${prefix}_SWEEP_INTERVAL`, "5m", 24 * HOUR_MS, 100),
  };
}
