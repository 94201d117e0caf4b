import type { Selectable, Updateable } from "kysely";
import { runHooks, type AppendedEvent } from "./append-hooks.js";
import { deferGuardedInsert, eventValues, insertStatement, type NewEvent } from "./append-statements.js";
import { forgetInstance, hooksBusy } from "./busy-instances.js";
import type { Tx } from "./db.js";
import type { Editor } from "./editor.js";
import type { AggregateRef, Appended, PendingEvent } from "./events.js";
import type { Database } from "./schema.js";

/**
 * Appends events to one aggregate after `previousSequence`. The caller holds the
 * aggregate's projection row lock (or creates it); the unique constraint on
 * (instance, aggregate, sequence) turns any race that slips past that into an error
 * instead of a lost update.
 */
export async function appendEvents(tx: Tx, aggregate: AggregateRef, previousSequence: number, events: PendingEvent[], editor: Editor): Promise<Appended> {
  if (events.length === 0) throw new Error("appendEvents needs at least one event");
  const rows = await insertEvents(tx, aggregate.instanceId, newEvents(aggregate, previousSequence, events), editor);
  const last = rows[rows.length - 1]!;
  return { sequence: last.sequence, createdAt: last.createdAt };
}

/** Rows one statement of appendToEach inserts: well below PostgreSQL's 65535 parameters. */
const APPEND_CHUNK = 1000;

/**
 * Appends one event to each of many aggregates of one type, each after its own
 * `previousSequence` (the users removed with their organization), in statements of
 * APPEND_CHUNK rows. The caller holds the aggregates' row locks, as for appendEvents.
 */
export async function appendToEach(
  tx: Tx,
  instanceId: string,
  aggregateType: string,
  items: readonly { id: string; orgId?: string; previousSequence: number; event: PendingEvent }[],
  editor: Editor,
): Promise<void> {
  for (let i = 0; i < items.length; i += APPEND_CHUNK) {
    const chunk = items
      .slice(i, i + APPEND_CHUNK)
      .map((item) => ({ aggregateType, aggregateId: item.id, orgId: item.orgId ?? "", sequence: item.previousSequence + 1, event: item.event }));
    await insertEvents(tx, instanceId, chunk, editor);
  }
}

/** One aggregate's events, numbered after `previousSequence`. */
function newEvents(aggregate: AggregateRef, previousSequence: number, events: PendingEvent[]): NewEvent[] {
  return events.map((event, i) => ({
    aggregateType: aggregate.type,
    aggregateId: aggregate.id,
    orgId: aggregate.orgId ?? "",
    sequence: previousSequence + i + 1,
    event,
  }));
}

/** One statement for the events and the hooks' reads, then the append hooks, in the caller's transaction. */
async function insertEvents(tx: Tx, instanceId: string, events: NewEvent[], editor: Editor): Promise<AppendedEvent[]> {
  const rows = await insertStatement(tx, instanceId, eventValues(instanceId, events, editor));
  const appended = rows.map((r) => ({
    position: r.position,
    sequence: r.sequence,
    type: r.event_type,
    createdAt: r.created_at,
    aggregateType: r.aggregate_type,
    aggregateId: r.aggregate_id,
  }));
  // The hooks found nothing to do again: this instance's appends may be queued once more.
  if (await runHooks(tx, instanceId, appended, rows[0])) forgetInstance(instanceId);
  return appended;
}

/**
 * appendEvents for a write that reads nothing back before its end: the insert is queued
 * (store/deferred.ts) and goes to the server with the transaction's next statement,
 * typically the projection row sent with the commit (commitWith), so that the whole write
 * is one round trip instead of two. The caller gets the sequence, which it knew; where a
 * projection row needs the event's time, eventTime reads it in that row's statement.
 *
 * The append hooks never see such an insert, so its statement checks that they would have
 * nothing to do (their reads are null) and otherwise fails the transaction with HOOKS_BUSY
 * (appendRefused): the write is then run again with its appends waiting for their answers.
 * An instance whose hooks had work appends so from then on, until they have none again.
 */
export async function queueEvents(
  tx: Tx,
  aggregate: AggregateRef,
  previousSequence: number,
  events: PendingEvent[],
  editor: Editor,
): Promise<{ sequence: number }> {
  const sequence = previousSequence + events.length;
  const values = eventValues(aggregate.instanceId, newEvents(aggregate, previousSequence, events), editor);
  const queued = !hooksBusy(aggregate.instanceId) && (await deferGuardedInsert(tx, values));
  if (!queued) await appendEvents(tx, aggregate, previousSequence, events, editor);
  return { sequence };
}

/** The projection columns of a row that its aggregate's first events just created. */
export function createdBy(appended: Appended) {
  return { created_at: appended.createdAt, change_date: appended.createdAt, sequence: appended.sequence };
}

/** Tables whose rows are projections of one aggregate: each carries its newest event's sequence and time. */
export type ProjectionTable = { [T in keyof Database]: Database[T] extends { sequence: number; change_date: unknown } ? T : never }[keyof Database];

/** The row a write's events change, and how. */
export interface ProjectedRow<T extends ProjectionTable> {
  table: T;
  /** The row, by these columns' values. */
  key: { [C in keyof Selectable<Database[T]>]?: Exclude<Selectable<Database[T]>[C], undefined> };
  /** What the events changed in it; a function of the append where a column takes the events' time. */
  set?: Updateable<Database[T]> | ((appended: Appended) => Updateable<Database[T]>);
}

/**
 * appendEvents, then the aggregate's projection row updated in the same transaction: what the
 * events changed, and the sequence and change date of the last of them, which the row's next
 * write appends after.
 */
export async function appendAndProject<T extends ProjectionTable>(
  tx: Tx,
  aggregate: AggregateRef,
  previousSequence: number,
  events: PendingEvent[],
  editor: Editor,
  row: ProjectedRow<T>,
): Promise<Appended> {
  const appended = await appendEvents(tx, aggregate, previousSequence, events, editor);
  const set = typeof row.set === "function" ? row.set(appended) : row.set;
  // The row's type was checked against its table above; Kysely cannot follow a table chosen by a type parameter.
  let update = tx.updateTable(row.table as ProjectionTable).set({ ...set, change_date: appended.createdAt, sequence: appended.sequence } as never);
  for (const [column, value] of Object.entries(row.key)) update = update.where(column as never, "=", value as never);
  await update.execute();
  return appended;
}
