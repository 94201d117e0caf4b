import { sql, type Expression, type Kysely, type RawBuilder, type Transaction } from "kysely";
import { instanceSequence } from "./instance-sequence.js";
import { prepared } from "./prepared.js";
import { changedBy } from "./projection-sources.js";
import type { Database } from "./schema.js";

export type Tx = Transaction<Database>;
export type Db = Kysely<Database>;

export interface AggregateRef {
  instanceId: string;
  type: string;
  id: string;
  /**
   * The organization the resource belongs to, for resources of one: the audit log shows an
   * organization's owners its events and no others (domain/audit). Absent: the instance's own.
   * A session is the instance's, but an append that knows its user gives the user's
   * organization, whose owners audit their users' sign-ins; its termination, which reads
   * only the session's row, stays the instance's.
   */
  orgId?: string;
}

/** Where a change came from when it came over HTTP: recorded with its events for the audit log. */
export interface Origin {
  /** The client the caller authenticated through: `app:<client id>` or `pat:<token id>`. */
  client?: string;
  ip?: string;
  userAgent?: string;
}

/** User agents are recorded up to this length: any client may send any header. */
const USER_AGENT_MAX = 512;

/** An origin from what a request says of itself, its empty parts left out and its user agent cut to USER_AGENT_MAX. */
export function originOf(parts: { client?: string | undefined; ip?: string | undefined; userAgent?: string | null | undefined }): Origin {
  const origin: Origin = {};
  if (parts.client) origin.client = parts.client;
  if (parts.ip) origin.ip = parts.ip;
  if (parts.userAgent) origin.userAgent = parts.userAgent.slice(0, USER_AGENT_MAX);
  return origin;
}

/** Who writes: the user id ("system" for the service itself) and, over HTTP, from where. */
export interface Editor {
  userId: string;
  origin?: Origin;
}

/** The service writing on its own behalf (sweeps, bootstrap, upstream answers). */
export const SYSTEM_EDITOR: Editor = { userId: "system" };

export interface PendingEvent {
  /** Dotted name such as `target.added`; event executions match on it. */
  type: string;
  payload: unknown;
}

export interface Appended {
  sequence: number;
  createdAt: Date;
}

/** An event as it was inserted, as append hooks see it. */
export interface AppendedEvent {
  aggregateType: string;
  aggregateId: string;
  position: number;
  sequence: number;
  type: string;
  createdAt: Date;
}

/**
 * Work that must commit or roll back with the events it follows, run in the appending
 * transaction after each insert. The layers above register theirs (the action engine's
 * outbox, actions/outbox.ts), so that the store knows of none of them.
 *
 * `read` is what the hook needs to know, as a scalar subquery that the insert's own
 * statement returns: the read costs no round trip of its own (every write pays it), and
 * PostgreSQL evaluates an uncorrelated subquery once per statement (an init plan), however
 * many rows it inserts. It sees what the insert's statement sees. A read that finds nothing
 * is null, and means the hook has nothing to do for these events: `run` is not called, and
 * an append that does not wait for its insert's answer (queueEvents) may go without it.
 */
export interface AppendHook<T = unknown> {
  read?: (db: Db, instanceId: string) => Expression<T>;
  run(tx: Tx, instanceId: string, events: readonly AppendedEvent[], read: T): Promise<void>;
}

/** In their order of registration: each hook's read is the insert's column `hook_<index>`. */
const appendHooks: AppendHook[] = [];

/** Registers a hook for every append of this process (once, however often it is called). */
export function onAppend<T>(hook: AppendHook<T>): void {
  if (appendHooks.includes(hook as AppendHook)) return;
  appendHooks.push(hook as AppendHook);
  appends = preparedAppends();
  guardedAppends = preparedGuards();
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
  editor: Editor,
): Promise<Appended> {
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
    const chunk = items.slice(i, i + APPEND_CHUNK).map((item) => ({ aggregateType, aggregateId: item.id, orgId: item.orgId ?? "", sequence: item.previousSequence + 1, event: item.event }));
    await insertEvents(tx, instanceId, chunk, editor);
  }
}

interface NewEvent {
  aggregateType: string;
  aggregateId: string;
  orgId: string;
  sequence: number;
  event: PendingEvent;
}

/** One aggregate's events, numbered after `previousSequence`. */
function newEvents(aggregate: AggregateRef, previousSequence: number, events: PendingEvent[]): NewEvent[] {
  return events.map((event, i) => ({ aggregateType: aggregate.type, aggregateId: aggregate.id, orgId: aggregate.orgId ?? "", sequence: previousSequence + i + 1, event }));
}

type ReturnedEvent = { position: number; sequence: number; event_type: string; created_at: Date; aggregate_type: string; aggregate_id: string } & Record<`hook_${number}`, unknown>;

const RETURNED = ["position", "sequence", "event_type", "created_at", "aggregate_type", "aggregate_id"] as const;

/** The hooks' reads as columns of the insert's answer, `hook_<i>` in the hooks' order. */
function hookReads(db: Db, instanceId: string) {
  return appendHooks.flatMap((hook, i) => (hook.read ? [sql`${hook.read(db, instanceId)}`.as(`hook_${i}`)] : []));
}

/** One event's values as they go into a statement; `numbered`: the instance's sequence (instanceSequence). */
type EventValues = {
  instanceId: string;
  aggregateType: string;
  aggregateId: string;
  orgId: string;
  sequence: number;
  type: string;
  payload: string;
  creator: string;
  client: string | null;
  ip: string | null;
  userAgent: string | null;
  numbered: string;
};

function eventRow(v: EventValues) {
  return {
    instance_id: v.instanceId,
    aggregate_type: v.aggregateType,
    aggregate_id: v.aggregateId,
    org_id: v.orgId,
    sequence: v.sequence,
    event_type: v.type,
    payload: v.payload,
    creator: v.creator,
    editor_client: v.client,
    editor_ip: v.ip,
    editor_agent: v.userAgent,
    instance_position: sql<number>`nextval(${v.numbered}::regclass)`,
  };
}

/** Appends of up to this many events run as prepared statements, one per count. */
const PREPARED_APPEND_MAX = 8;

/**
 * An append of `count` events as a prepared statement (store/prepared.ts): built again
 * whenever a hook is registered, since the hooks' reads are part of it. Built as an unnamed
 * statement, a three-event append cost PostgreSQL about 0.2 ms more CPU in parsing and
 * planning than it does prepared.
 */
function preparedAppend(count: number) {
  return prepared((db, p: Params) =>
    db
      .insertInto("events")
      .values(Array.from({ length: count }, (_, i) => eventRow(appendValues(p, i))))
      .returning([...RETURNED, ...hookReads(db, p.instanceId as string)] as never),
  );
}

/**
 * A queued append of `count` events (queueEvents): its answer is nobody's, and it fails by
 * itself (refuse_queued_append, migration 0027) unless every hook's read finds nothing.
 */
function guardedAppend(count: number) {
  return prepared((db, p: Params) =>
    db
      .insertInto("events")
      .values(Array.from({ length: count }, (_, i) => eventRow(appendValues(p, i))))
      .returning(sql<boolean>`case when ${hooksIdle(db, p.instanceId as string)} then true else refuse_queued_append(${p.instanceId}) end`.as("idle")),
  );
}

/** Whether every hook's read finds nothing (preparedGuards makes none while a hook has no read). */
function hooksIdle(db: Db, instanceId: string) {
  const idle = appendHooks.map((hook) => sql`${hook.read!(db, instanceId)} is null`);
  return idle.length > 0 ? sql.join(idle, sql` and `) : sql`true`;
}

const preparedAppends = () => Array.from({ length: PREPARED_APPEND_MAX }, (_, i) => preparedAppend(i + 1));
/** None while a hook has no read: its work cannot be ruled out, so no append is queued. */
const preparedGuards = () => (appendHooks.every((hook) => hook.read) ? Array.from({ length: PREPARED_APPEND_MAX }, (_, i) => guardedAppend(i + 1)) : []);
let appends = preparedAppends();
let guardedAppends = preparedGuards();

type Params = Record<string, string | number | null>;

/** The values of the `i`th event of a prepared append, from its parameters (appendParams). */
function appendValues(p: Params, i: number): EventValues {
  return {
    instanceId: p.instanceId as string,
    aggregateType: p[`aggregateType${i}`] as string,
    aggregateId: p[`aggregateId${i}`] as string,
    orgId: p[`orgId${i}`] as string,
    sequence: p[`sequence${i}`] as number,
    type: p[`type${i}`] as string,
    payload: p[`payload${i}`] as string,
    creator: p.creator as string,
    client: p.client as string | null,
    ip: p.ip as string | null,
    userAgent: p.userAgent as string | null,
    numbered: p.numbered as string,
  };
}

/** The prepared append's parameters for these events. */
function appendParams(values: EventValues[]): Params {
  const first = values[0]!;
  const params: Params = { instanceId: first.instanceId, creator: first.creator, client: first.client, ip: first.ip, userAgent: first.userAgent, numbered: first.numbered };
  values.forEach((v, i) => {
    params[`aggregateType${i}`] = v.aggregateType;
    params[`aggregateId${i}`] = v.aggregateId;
    params[`orgId${i}`] = v.orgId;
    params[`sequence${i}`] = v.sequence;
    params[`type${i}`] = v.type;
    params[`payload${i}`] = v.payload;
  });
  return params;
}

function eventValues(instanceId: string, events: NewEvent[], editor: Editor): EventValues[] {
  const numbered = instanceSequence(instanceId);
  const { client = null, ip = null, userAgent = null } = editor.origin ?? {};
  return events.map((e) => ({
    instanceId,
    aggregateType: e.aggregateType,
    aggregateId: e.aggregateId,
    orgId: e.orgId,
    sequence: e.sequence,
    type: e.event.type,
    payload: JSON.stringify(e.event.payload ?? {}),
    creator: editor.userId,
    client,
    ip,
    userAgent,
    numbered,
  }));
}

/** One statement for the events and the hooks' reads, then the append hooks, in the caller's transaction. */
async function insertEvents(tx: Tx, instanceId: string, events: NewEvent[], editor: Editor): Promise<AppendedEvent[]> {
  const values = eventValues(instanceId, events, editor);
  const rows = (
    values.length <= PREPARED_APPEND_MAX
      ? await appends[values.length - 1]!(tx, appendParams(values))
      : await tx
          .insertInto("events")
          .values(values.map(eventRow))
          .returning([...RETURNED, ...hookReads(tx, instanceId)] as never)
          .execute()
  ) as ReturnedEvent[];
  const appended = rows.map((r) => ({ position: r.position, sequence: r.sequence, type: r.event_type, createdAt: r.created_at, aggregateType: r.aggregate_type, aggregateId: r.aggregate_id }));
  let idle = true;
  for (const [i, hook] of appendHooks.entries()) {
    const read = hook.read ? rows[0]?.[`hook_${i}`] : undefined;
    if (hook.read && read === null) continue;
    idle = false;
    await hook.run(tx, instanceId, appended, read);
  }
  // The hooks found nothing to do again: this instance's appends may be queued once more.
  if (idle) busyInstances.delete(instanceId);
  return appended;
}

/**
 * Instances where a queued append (queueEvents) found an append hook with work: their
 * appends wait for the insert's answer, until one of them finds the hooks idle again. At
 * most one entry per instance with such work (event executions), of this process.
 */
const busyInstances = new Set<string>();

/** The SQLSTATE of the refusal of a queued append whose hooks have work (migration 0027); ours, as P0404 is. */
const HOOKS_BUSY = "P0100";

/**
 * Whether a write failed because an append it queued (queueEvents) met append hooks with
 * work. The failed write left nothing; run again, it appends the slow way, which runs the
 * hooks (store/database.ts retries it once, at once).
 */
export function appendRefused(error: unknown): boolean {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== HOOKS_BUSY || typeof detail !== "string") return false;
  busyInstances.add(detail);
  return true;
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
  const guard = guardedAppends[events.length - 1];
  if (!guard || busyInstances.has(aggregate.instanceId)) {
    await appendEvents(tx, aggregate, previousSequence, events, editor);
    return { sequence };
  }
  await guard.defer(tx, appendParams(eventValues(aggregate.instanceId, newEvents(aggregate, previousSequence, events), editor)));
  return { sequence };
}

/**
 * The time of an aggregate's event by its sequence, as a value of the statement it is part
 * of (one probe of the unique index on instance, aggregate and sequence): the creation time
 * of a projection row whose events were queued (queueEvents). In milliseconds, as every
 * projection keeps its times (they are written from a Date otherwise): the API answers
 * milliseconds, and a filter on a time it answered must find the row again.
 */
export function eventTime(instanceId: string, aggregateType: string, aggregateId: string, sequence: number) {
  return sql<Date>`(select date_trunc('milliseconds', created_at) from events where instance_id = ${instanceId} and aggregate_type = ${aggregateType} and aggregate_id = ${aggregateId} and sequence = ${sequence})`;
}

/** Drops what this process remembers of an instance: its removal. */
export function forgetInstance(instanceId: string): void {
  busyInstances.delete(instanceId);
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
 * The state of a system-level projection (the instances): its newest event in any instance,
 * by the global position, which only grows. Instance-level projections count their
 * instance's events instead (projectionState).
 */
export async function systemProjectionState(db: Db, aggregateType: "instance"): Promise<ProjectionState> {
  const row = await db
    .selectFrom("events")
    .select(["position", "created_at"])
    .where("aggregate_type", "=", aggregateType)
    .orderBy("position", "desc")
    .limit(1)
    .executeTakeFirst();
  return { position: row ? Number(row.position) : 0, timestamp: row?.created_at };
}

/**
 * Projections are written in the same transaction as their events, so a projection has
 * processed exactly the events that exist for the aggregate types that change it
 * (projection-sources.ts: its own, and those whose removals cascade into it). One index
 * probe per type (events_instance_type_position), newest first.
 */
export async function projectionState(
  db: Db,
  instanceId: string,
  aggregateType: string,
): Promise<ProjectionState> {
  const { rows } = await sql<{ instance_position: number; created_at: Date }>`${newestEvent(instanceId, aggregateType, sql`e.instance_position, e.created_at`)}`.execute(db);
  const row = rows[0];
  return { position: row ? Number(row.instance_position) : 0, timestamp: row?.created_at };
}

/**
 * projectionState as two columns of a search page's statement (store/search.ts): uncorrelated
 * subqueries, which PostgreSQL evaluates once per statement. pageState reads them back.
 */
export function projectionStateColumns(instanceId: string, aggregateType: string) {
  return [
    sql<number | null>`(${newestEvent(instanceId, aggregateType, sql`e.instance_position`)})`.as("state_position"),
    sql<Date | null>`(${newestEvent(instanceId, aggregateType, sql`e.created_at`)})`.as("state_timestamp"),
  ] as const;
}

/** What projectionStateColumns puts on each row of a page. */
export interface StateColumns {
  state_position?: number | null;
  state_timestamp?: Date | null;
}

/** The state a page's first row carries; a page without rows reads it on its own. */
export function pageState(db: Db, first: StateColumns | undefined, instanceId: string, aggregateType: string): Promise<ProjectionState> {
  if (!first) return projectionState(db, instanceId, aggregateType);
  return Promise.resolve({ position: Number(first.state_position ?? 0), timestamp: first.state_timestamp ?? undefined });
}

function newestEvent(instanceId: string, aggregateType: string, columns: RawBuilder<unknown>) {
  return sql`
    select ${columns}
    from unnest(${changedBy(aggregateType)}::text[]) as t(aggregate_type)
    cross join lateral (
      select instance_position, created_at, position from events
      where instance_id = ${instanceId} and aggregate_type = t.aggregate_type
      order by position desc limit 1
    ) e
    order by e.position desc limit 1`;
}
