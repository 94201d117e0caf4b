import { sql, type Kysely, type Transaction } from "kysely";
import { recordDeliveries } from "../actions/outbox.js";
import { instanceSequence } from "./instance-sequence.js";
import type { Database } from "./schema.js";

export type Tx = Transaction<Database>;
export type Db = Kysely<Database>;

export interface AggregateRef {
  instanceId: string;
  type: string;
  id: string;
}

export interface PendingEvent {
  /** Dotted name such as `target.added`; event executions match on it. */
  type: string;
  payload: unknown;
}

export interface Appended {
  sequence: number;
  createdAt: Date;
}

/**
 * Appends events to one aggregate after `previousSequence`. The caller holds the
 * aggregate's projection row lock (or creates it); the unique constraint on
 * (instance, aggregate, sequence) turns any race that slips past that into an error
 * instead of a lost update.
 */
export async function appendEvents(
  tx: Tx,
  aggregate: AggregateRef,
  previousSequence: number,
  events: PendingEvent[],
  creator: string,
): Promise<Appended> {
  if (events.length === 0) throw new Error("appendEvents needs at least one event");
  const numbered = instanceSequence(aggregate.instanceId);
  const rows = await tx
    .insertInto("events")
    .values(
      events.map((event, i) => ({
        instance_id: aggregate.instanceId,
        aggregate_type: aggregate.type,
        aggregate_id: aggregate.id,
        sequence: previousSequence + i + 1,
        event_type: event.type,
        payload: JSON.stringify(event.payload ?? {}),
        creator,
        instance_position: sql<number>`nextval(${numbered}::regclass)`,
      })),
    )
    .returning(["position", "sequence", "event_type", "created_at"])
    .execute();
  // Event executions' outbox, in this transaction (actions/outbox.ts).
  await recordDeliveries(tx, aggregate, rows.map((r) => ({ position: r.position, sequence: r.sequence, type: r.event_type, createdAt: r.created_at })));
  const last = rows[rows.length - 1]!;
  return { sequence: last.sequence, createdAt: last.created_at };
}

/** The projection columns of a row that its aggregate's first events just created. */
export function createdBy(appended: Appended) {
  return { created_at: appended.createdAt, change_date: appended.createdAt, sequence: appended.sequence };
}

/**
 * The sequence of an aggregate's newest event, for aggregates without a projection row
 * to lock: ones whose id is derived (an execution per condition) and may be re-created.
 */
export async function lastSequence(tx: Tx, aggregate: AggregateRef): Promise<number> {
  const row = await tx
    .selectFrom("events")
    .select((eb) => eb.fn.max("sequence").as("sequence"))
    .where("instance_id", "=", aggregate.instanceId)
    .where("aggregate_type", "=", aggregate.type)
    .where("aggregate_id", "=", aggregate.id)
    .executeTakeFirst();
  return Number(row?.sequence ?? 0);
}

/** The newest event of an aggregate, for answering a change that changed nothing. */
export async function lastEvent(tx: Tx, aggregate: AggregateRef): Promise<{ sequence: number; createdAt: Date } | undefined> {
  const row = await tx
    .selectFrom("events")
    .select(["sequence", "created_at"])
    .where("instance_id", "=", aggregate.instanceId)
    .where("aggregate_type", "=", aggregate.type)
    .where("aggregate_id", "=", aggregate.id)
    .orderBy("sequence", "desc")
    .limit(1)
    .executeTakeFirst();
  return row && { sequence: row.sequence, createdAt: row.created_at };
}

export interface ProjectionState {
  /** Instance position of the newest event the projection has applied: the tenant's own count. */
  position: number;
  timestamp: Date | undefined;
}

/**
 * Projections are written in the same transaction as their events, so a projection has
 * processed exactly the events that exist for its aggregate type.
 */
export async function projectionState(
  db: Db,
  instanceId: string,
  aggregateType: string,
): Promise<ProjectionState> {
  const row = await db
    .selectFrom("events")
    .select(["instance_position", "created_at"])
    .where("instance_id", "=", instanceId)
    .where("aggregate_type", "=", aggregateType)
    .orderBy("position", "desc")
    .limit(1)
    .executeTakeFirst();
  return { position: row?.instance_position ?? 0, timestamp: row?.created_at };
}
