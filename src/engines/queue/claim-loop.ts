import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../log/logger.js";
import { newId } from "../../store/ids.js";

export interface ClaimLoopOptions<Row> {
  /** Rows handled at once per process. */
  concurrency: number;
  /** How long the loop rests when nothing was due. */
  pollIntervalMs: number;
  logger: Logger;
  /** What the queue holds, for the log ("event deliveries", "notifications"). */
  what: string;
  /**
   * Claims up to `limit` due rows for `claimId` in one short statement (a lease: a claim
   * of a process that died comes back when it runs out). Ends when `signal` fires.
   */
  claim(claimId: string, limit: number, signal: AbortSignal): Promise<Row[]>;
  /** Works one claimed row to its end, result written; an error is logged and the lease brings the row back. */
  handle(row: Row, claimId: string): Promise<void>;
  /** The row's id, for the log. */
  idOf(row: Row): string;
}

/**
 * The worker of a leased queue in the database, in every process: claims due rows, works
 * them in a pool of `concurrency` (one slow row does not hold back the others), and rests
 * until the poll interval passes or a row finishes. `stop` ends the claiming at once and
 * waits for the rows in flight, so that a shutdown sends nothing twice. The event
 * deliveries of the action engine and the notifications both run on it.
 */
export function startClaimLoop<Row>(o: ClaimLoopOptions<Row>): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const loop = async () => {
    while (!stopping.signal.aborted) {
      const free = o.concurrency - inFlight.size;
      let claimed: Row[] = [];
      if (free > 0) {
        const claimId = newId();
        try {
          claimed = await o.claim(claimId, free, stopping.signal);
        } catch (error) {
          if (!stopping.signal.aborted) o.logger.warn({ err: error }, `claiming ${o.what} failed; trying again after the poll interval`);
        }
        for (const row of claimed) {
          const work: Promise<void> = o
            .handle(row, claimId)
            .catch((error: unknown) =>
              o.logger.warn({ err: error, id: o.idOf(row) }, `writing the result of one of the ${o.what} failed; its lease brings it back`),
            )
            .finally(() => inFlight.delete(work));
          inFlight.add(work);
        }
        // All free slots filled: more may be due.
        if (claimed.length === free) continue;
      }
      const pause = new AbortController();
      await Promise.race([
        sleep(o.pollIntervalMs, undefined, { signal: AbortSignal.any([stopping.signal, pause.signal]) }).catch(() => {}),
        ...(inFlight.size > 0 ? [Promise.race(inFlight)] : []),
      ]);
      pause.abort();
    }
    await Promise.all(inFlight);
  };
  const running = loop();
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
