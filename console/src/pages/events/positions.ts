// Named with .js, as Node resolves them: the unit tests import this module (test/unit/console-event-log.test.ts).
import type { Event } from "../../../../gen/platform/resources/event/v3alpha/event_pb.js";

/** Before every position of the log. */
const LOG_START = "0.0";

/** Positions are `<transaction>.<position>`, in the log's order (the service's positions.ts); the transaction id may exceed 2^53. */
function parts(position: string): [bigint, bigint] {
  const [tx = "0", n = "0"] = position.split(".");
  return [BigInt(tx), BigInt(n)];
}

/** Negative when `a` comes before `b` in the log. */
export function comparePositions(a: string, b: string): number {
  const [ta, na] = parts(a);
  const [tb, nb] = parts(b);
  return ta !== tb ? (ta < tb ? -1 : 1) : na === nb ? 0 : na < nb ? -1 : 1;
}

/**
 * Where a page's stream starts: after how far its first search had read the log (`searched`,
 * SearchEvents' `position`), so that nothing written between the search and the stream is
 * missed and the stream never rereads what the search covered; after a later event shown if
 * there is one (a refetched page may have read further).
 */
export function followFrom(searched: string | undefined, shown: readonly Event[]): string {
  return shown.reduce((latest, e) => (comparePositions(e.position, latest) > 0 ? e.position : latest), searched || LOG_START);
}

/** The streamed events (newest first) above the searched pages, each event once: a page refetched after the stream brought an event has it too. */
export function withoutRepeats(live: readonly Event[], searched: readonly Event[]): Event[] {
  const seen = new Set<string>();
  const shown: Event[] = [];
  for (const e of [...live, ...searched]) {
    if (seen.has(e.position)) continue;
    seen.add(e.position);
    shown.push(e);
  }
  return shown;
}
