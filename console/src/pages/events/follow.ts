import { Code, ConnectError } from "@connectrpc/connect";
// Named with .js, as Node resolves them: the unit tests import this module (test/unit/console-event-log.test.ts).
import type { Event } from "../../../../gen/platform/resources/event/v3alpha/event_pb.js";
import type { WatchEventsResponse } from "../../../../gen/platform/resources/event/v3alpha/event_service_pb.js";

/** Where a page's live updates stand, for the person to see. */
export type LiveState = { state: "connecting" } | { state: "live" } | { state: "retrying"; error: string } | { state: "stopped"; error: string };

/** Opens a WatchEvents stream after a position (the page's filters and context are the caller's). */
export type OpenStream = (after: string, signal: AbortSignal) => AsyncIterable<WatchEventsResponse>;

/** Refusals that asking again cannot change: the page stops following and says why. */
const FINAL_CODES = new Set([Code.PermissionDenied, Code.Unauthenticated, Code.InvalidArgument, Code.Unimplemented]);

const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 30_000;

/**
 * How long to wait before the `failures`-th retry in a row: doubling from a second up to 30,
 * each drawn between 80 and 120% so that the tabs a restart cut off do not all come back at
 * the same instant.
 */
export function retryDelay(failures: number, random = Math.random): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1)) * (0.8 + random() * 0.4);
}

/**
 * Follows the log from `from` until `signal` aborts. Every answer, a heartbeat too, carries
 * the position read up to, and a stream that ends (the service's longest duration, a
 * restart, a dropped connection) is opened again after the last one: the service then sends
 * exactly the events after it, so none is missed and none comes twice. Failures wait longer
 * each time (retryDelay); an answer resets that. A stream that ends without a word counts as
 * a failure, so a service that keeps closing at once is not asked in a tight loop.
 */
export async function followLog(
  open: OpenStream,
  from: string,
  signal: AbortSignal,
  on: { event(e: Event): void; state(s: LiveState): void },
  sleep = abortableSleep,
): Promise<void> {
  let after = from;
  let failures = 0;
  while (!signal.aborted) {
    let answered = false;
    try {
      for await (const answer of open(after, signal)) {
        if (!answered) on.state({ state: "live" });
        answered = true;
        failures = 0;
        if (answer.event) on.event(answer.event);
        if (answer.position) after = answer.position;
      }
      if (answered) continue;
      throw new ConnectError("the stream ended without an answer", Code.Unavailable);
    } catch (error) {
      if (signal.aborted) return;
      const refusal = ConnectError.from(error);
      if (FINAL_CODES.has(refusal.code)) return on.state({ state: "stopped", error: refusal.rawMessage });
      failures++;
      on.state({ state: "retrying", error: refusal.rawMessage });
      await sleep(retryDelay(failures), signal);
      if (!signal.aborted) on.state({ state: "connecting" });
    }
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
