import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import type { WatchEventsResponse } from "../../../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { comparePositions, formatPosition, type LogPosition } from "../../../domain/audit/positions.js";
import { eventsAfter, newestPosition, type EventFilter, type LogScope } from "../../../domain/audit/queries.js";
import type { Db } from "../../../store/db.js";
import { eventToProto } from "./convert.js";

/** PLATFORM_EVENTS_WATCH_*: how streams of the audit log poll, and how long they last. */
export interface WatchSettings {
  pollMs: number;
  heartbeatMs: number;
  maxDurationMs: number;
  perInstance: number;
}

/** Open streams per instance: each polls the database, so an instance may hold only so many. */
export class WatchSlots {
  readonly #open = new Map<string, number>();

  constructor(readonly perInstance: number) {}

  get open(): number {
    let n = 0;
    for (const count of this.#open.values()) n += count;
    return n;
  }

  /** Takes a slot, or refuses with ResourceExhausted; call the answer to give it back. */
  take(instanceId: string): () => void {
    const open = this.#open.get(instanceId) ?? 0;
    if (open >= this.perInstance)
      throw new ConnectError(
        `${this.perInstance} event streams are open for this instance, the most allowed; close one or search instead`,
        Code.ResourceExhausted,
      );
    this.#open.set(instanceId, open + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#open.get(instanceId) ?? 1) - 1;
      if (left > 0) this.#open.set(instanceId, left);
      else this.#open.delete(instanceId);
    };
  }
}

/** Events per read: a stream far behind catches up in reads of this size. */
const BATCH = 500;

type Answer = Partial<Pick<WatchEventsResponse, "event" | "position">>;

/**
 * Follows the log after `after` (absent: from its newest final event on). Each read goes up
 * to the newest final event of the instance, and the position moves there even when the
 * filters left nothing, so that a quiet filter costs no more per read than a busy one and a
 * heartbeat's position is a real resume point. The first answer says where the stream starts.
 */
export async function* followEvents(
  db: Db,
  scope: LogScope,
  filters: readonly EventFilter[],
  after: LogPosition | undefined,
  settings: WatchSettings & { slots: WatchSlots; signal: AbortSignal },
): AsyncGenerator<Answer> {
  const release = settings.slots.take(scope.instanceId);
  // A caller that goes away while the stream waits to be read never resumes the generator,
  // so its finally would not run: the slot goes back with the abort.
  settings.signal.addEventListener("abort", release, { once: true });
  try {
    let cursor = after ?? (await newestPosition(db, scope.instanceId));
    yield { position: formatPosition(cursor) };
    const ends = Date.now() + settings.maxDurationMs;
    let spoke = Date.now();
    while (!settings.signal.aborted && Date.now() < ends) {
      const top = await newestPosition(db, scope.instanceId);
      const events = await eventsAfter(db, scope, filters, cursor, top, BATCH);
      for (const event of events) {
        cursor = event.at;
        yield { event: eventToProto(event), position: formatPosition(event.at) };
      }
      if (events.length === BATCH) continue;
      if (comparePositions(top, cursor) > 0) cursor = top;
      if (events.length > 0) spoke = Date.now();
      else if (Date.now() - spoke >= settings.heartbeatMs) {
        yield { position: formatPosition(cursor) };
        spoke = Date.now();
      }
      // Rejects when the caller goes away or the server shuts down: the loop then ends.
      await sleep(settings.pollMs, undefined, { signal: settings.signal }).catch(() => {});
    }
  } finally {
    release();
  }
}
