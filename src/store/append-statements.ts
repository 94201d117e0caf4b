import { sql } from "kysely";
import { everyHookReads, hookCount, hookReads, hooksIdle } from "./append-hooks.js";
import type { Db, Tx } from "./db.js";
import type { Editor } from "./editor.js";
import { instanceSequence } from "./instance-sequence.js";
import type { PendingEvent } from "./events.js";
import { prepared } from "./prepared.js";

/** An event to insert, numbered in its aggregate. */
export interface NewEvent {
  aggregateType: string;
  aggregateId: string;
  orgId: string;
  sequence: number;
  event: PendingEvent;
}

/** What an insert answers per event, with the hooks' reads as `hook_<i>` (append-hooks.ts). */
export type ReturnedEvent = { position: number; sequence: number; event_type: string; created_at: Date; aggregate_type: string; aggregate_id: string } & Record<
  `hook_${number}`,
  unknown
>;

const RETURNED = ["position", "sequence", "event_type", "created_at", "aggregate_type", "aggregate_id"] as const;

/** One event's values as they go into a statement; `numbered`: the instance's sequence (instanceSequence). */
export type EventValues = {
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

export function eventValues(instanceId: string, events: NewEvent[], editor: Editor): EventValues[] {
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

/** Appends of up to this many events run as prepared statements, one per count. */
const PREPARED_APPEND_MAX = 8;

type Params = Record<string, string | number | null>;

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

/** The prepared statements for the hooks registered when they were built. */
function build() {
  return {
    hooks: hookCount(),
    appends: Array.from({ length: PREPARED_APPEND_MAX }, (_, i) => preparedAppend(i + 1)),
    // None while a hook has no read: its work cannot be ruled out, so no append is queued.
    guards: everyHookReads() ? Array.from({ length: PREPARED_APPEND_MAX }, (_, i) => guardedAppend(i + 1)) : [],
  };
}

let statements = build();

function current() {
  if (statements.hooks !== hookCount()) statements = build();
  return statements;
}

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
  const params: Params = {
    instanceId: first.instanceId,
    creator: first.creator,
    client: first.client,
    ip: first.ip,
    userAgent: first.userAgent,
    numbered: first.numbered,
  };
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

/** One statement for the events and the hooks' reads; prepared up to PREPARED_APPEND_MAX events. */
export async function insertStatement(tx: Tx, instanceId: string, values: EventValues[]): Promise<ReturnedEvent[]> {
  const prepared = current().appends[values.length - 1];
  const rows = prepared
    ? await prepared(tx, appendParams(values))
    : await tx
        .insertInto("events")
        .values(values.map(eventRow))
        .returning([...RETURNED, ...hookReads(tx, instanceId)] as never)
        .execute();
  return rows as ReturnedEvent[];
}

/**
 * Queues the insert of these events (store/deferred.ts), guarded against hooks with work;
 * false, and nothing queued, where no guarded statement fits (too many events, or a hook without a read).
 */
export async function deferGuardedInsert(tx: Db, values: EventValues[]): Promise<boolean> {
  const guard = current().guards[values.length - 1];
  if (!guard) return false;
  await guard.defer(tx, appendParams(values));
  return true;
}
