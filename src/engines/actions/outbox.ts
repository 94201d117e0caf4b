import { sql } from "kysely";
import { eventCandidates } from "../../domain/action/execution/events.js";
import { newId } from "../../store/ids.js";
import { onAppend, type AppendHook, type AppendedEvent } from "../../store/append-hooks.js";
import type { Tx } from "../../store/db.js";
import { targetOrder } from "./plans.js";

/** Outbox rows per statement: 14 parameters each, well below PostgreSQL's 65535. */
const ROWS_PER_INSERT = 1000;

/**
 * The outbox half of event executions: for every event just inserted, one pending delivery
 * per target of the most specific event execution of its instance (the type, else its
 * longest group, else `event`, includes flattened as for requests), in the event's own
 * transaction: a committed event never lacks its deliveries, a rolled back one never has
 * any, and no reader has to follow the event log past events committed late.
 *
 * The executions are read by the insert's own statement (the store's append hook read),
 * not from a per-process cache: a cache can be stale relative to a concurrent execution
 * change for as long as a NOTIFY takes, and this read costs no round trip of its own and
 * one index probe, which finds nothing in instances without event executions. An execution
 * therefore applies to the events of every insert that starts after it committed.
 *
 * The instance's `actions` flag is not consulted here (its system default is per process
 * configuration, which a transaction cannot see); the worker checks it before each call and
 * records a delivery of an instance with actions off as failed, without calling.
 */
const outbox: AppendHook<EventExecution[] | null> = {
  read: (db, instanceId) =>
    sql<
      EventExecution[] | null
    >`(select jsonb_agg(e) from (${db.selectFrom("executions").select(["id", "targets", "includes"]).where("instance_id", "=", instanceId).where("condition_type", "=", "event")}) e)`,
  run: recordDeliveries,
};

interface EventExecution {
  id: string;
  targets: string[];
  includes: string[];
}

async function recordDeliveries(tx: Tx, instanceId: string, events: readonly AppendedEvent[], executions: EventExecution[] | null): Promise<void> {
  // jsonb_agg over no rows is null: the common case, an instance without event executions.
  if (!executions) return;
  const byId = new Map(executions.map((e) => [e.id, e]));
  const rows = events.flatMap((event) => {
    const chosen = eventCandidates(event.type).find((id) => byId.has(id));
    if (!chosen) return [];
    return targetOrder(chosen, byId).map((targetId) => ({
      instance_id: instanceId,
      id: newId(),
      event_position: event.position,
      event_type: event.type,
      aggregate_type: event.aggregateType,
      aggregate_id: event.aggregateId,
      event_sequence: event.sequence,
      target_id: targetId,
      execution_id: chosen,
      status: "pending" as const,
      next_attempt_at: event.createdAt,
      created_at: event.createdAt,
      window_start: event.createdAt,
    }));
  });
  // In statements of ROWS_PER_INSERT: an organization's removal records many events at once.
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
    await tx
      .insertInto("action_deliveries")
      .values(rows.slice(i, i + ROWS_PER_INSERT))
      .execute();
}

/**
 * Makes every append of this process record its deliveries (the store's append hook). The
 * service calls it at start, and so does every other entry point that writes events.
 */
export function installOutbox(): void {
  onAppend(outbox);
}
