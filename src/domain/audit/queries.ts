import { sql, type ExpressionBuilder } from "kysely";
import type { Db } from "../../store/db.js";
import type { Database } from "../../store/schema.js";
import { LOG_START, type LogPosition, type PageKey } from "./positions.js";
import { redactedPayload } from "./redaction.js";

export type EventFilter =
  | { resource: { type: string; id: string } }
  | { resourceTypes: string[] }
  | { editor: string }
  | { types: string[]; groups: string[] }
  | { orgId: string }
  | { since?: Date; until?: Date };

/** Whose events a caller reads: one instance ('' for the system's own), and within it, these organizations only when set. */
export interface LogScope {
  instanceId: string;
  orgs?: ReadonlySet<string>;
}

/** An event as the log shows it: its payload already redacted (redaction.ts). */
export interface LogEvent {
  at: LogPosition;
  type: string;
  resourceType: string;
  resourceId: string;
  sequence: number;
  orgId: string;
  instanceId: string;
  createdAt: Date;
  editor: { userId: string; displayName: string | null; client: string | null; ip: string | null; userAgent: string | null };
  payload: Record<string, unknown>;
}

export interface LogPage {
  events: LogEvent[];
  /** Where the next page starts; undefined when this one is the last. */
  next?: PageKey;
}

/**
 * Only events of transactions older than the oldest one still running: any event that can
 * still commit sorts after every event this shows (positions.ts), so a reader never passes
 * a place where one may yet appear. Transaction ids are the cluster's, so a transaction of
 * another database on the same server would hold the log back too; those seen running in
 * another database are left out (they cannot write our events). One whose database cannot be
 * seen (another role's, without pg_read_all_stats) still counts: a delay, never a gap.
 */
const FINAL = sql<boolean>`e.tx_id < coalesce(
  (select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x
    where xid(x) not in (select backend_xid from pg_stat_activity where datname <> current_database() and backend_xid is not null)),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * A page of the log, newest first unless `asc`. A search of one resource pages by that
 * resource's sequence (the unique index on it answers at once, however large the table);
 * every other search by log position (migration 0030's indexes). Events older than the
 * instance's audit log retention are never shown.
 */
export async function searchEvents(
  db: Db,
  scope: LogScope,
  filters: readonly EventFilter[],
  page: { asc: boolean; limit: number; from?: PageKey; after?: LogPosition },
): Promise<LogPage> {
  const by = ownHistory(filters) ? "sequence" : "position";
  const from = page.from;
  if (scope.orgs?.size === 0 || (from && from.by !== by)) return { events: [] };
  let query = scoped(db, scope, filters);
  if (page.after) query = query.where(inLogOrder(">", page.after));
  const direction = page.asc ? "asc" : "desc";
  const beyond = page.asc ? ">" : "<";
  if (from?.by === "sequence") query = query.where(sql<boolean>`e.sequence ${sql.raw(beyond)} ${from.after}`);
  if (from?.by === "position") query = query.where(inLogOrder(beyond, from.after));
  query = by === "sequence" ? query.orderBy("e.sequence", direction) : query.orderBy(sql`e.tx_id`, direction).orderBy("e.instance_position", direction);
  const rows = await query.limit(page.limit + 1).execute();
  const events = rows.slice(0, page.limit).map(toLogEvent);
  const last = events[events.length - 1];
  if (rows.length <= page.limit || !last) return { events };
  return { events, next: by === "sequence" ? { by, after: last.sequence } : { by, after: last.at } };
}

/** The events after `cursor` up to `top` (newestPosition) in log order, for a stream (the caller polls). */
export async function eventsAfter(
  db: Db,
  scope: LogScope,
  filters: readonly EventFilter[],
  cursor: LogPosition,
  top: LogPosition,
  limit: number,
): Promise<LogEvent[]> {
  if (scope.orgs?.size === 0) return [];
  const rows = await scoped(db, scope, filters)
    .where(inLogOrder(">", cursor))
    .where(inLogOrder("<=", top))
    .orderBy(sql`e.tx_id`)
    .orderBy("e.instance_position")
    .limit(limit)
    .execute();
  return rows.map(toLogEvent);
}

/** The position of the newest final event of an instance: where a stream "from now on" starts. */
export async function newestPosition(db: Db, instanceId: string): Promise<LogPosition> {
  const row = await db
    .selectFrom("events as e")
    .select([sql<string>`e.tx_id::text`.as("tx"), "e.instance_position"])
    .where("e.instance_id", "=", instanceId)
    .where(FINAL)
    .orderBy(sql`e.tx_id`, "desc")
    .orderBy("e.instance_position", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? { tx: row.tx, position: Number(row.instance_position) } : LOG_START;
}

/** The event's place in the log compared with a position's, in the log's order (positions.ts). */
function inLogOrder(op: ">" | "<" | "<=", p: LogPosition) {
  return sql<boolean>`(e.tx_id, e.instance_position) ${sql.raw(op)} (${p.tx}::xid8, ${p.position})`;
}

/** A search names one resource: its history, paged by its sequence. */
function ownHistory(filters: readonly EventFilter[]): boolean {
  return filters.some((f) => "resource" in f);
}

function base(db: Db, instanceId: string) {
  return db
    .selectFrom("events as e")
    .leftJoin("users as u", (j) => j.onRef("u.instance_id", "=", "e.instance_id").onRef("u.id", "=", "e.creator"))
    .select([
      sql<string>`e.tx_id::text`.as("tx"),
      "e.instance_position",
      "e.event_type",
      "e.aggregate_type",
      "e.aggregate_id",
      "e.sequence",
      "e.org_id",
      "e.instance_id",
      "e.created_at",
      "e.creator",
      "u.name as editor_name",
      "e.editor_client",
      "e.editor_ip",
      "e.editor_agent",
      "e.payload",
    ])
    .where("e.instance_id", "=", instanceId)
    .where(FINAL);
}

type Events = ReturnType<typeof base>;
type Row = Awaited<ReturnType<Events["execute"]>>[number];

function scoped(db: Db, scope: LogScope, filters: readonly EventFilter[]): Events {
  // The instance's audit log retention, read by the statement itself (once: an uncorrelated
  // subquery), not by one of its own; none, and the system's own events, show everything.
  let query = base(db, scope.instanceId).where(
    sql<boolean>`coalesce(e.created_at >= now() - (select i.audit_log_retention_ms from instances i where i.id = ${scope.instanceId}) * interval '1 millisecond', true)`,
  );
  if (scope.orgs) query = query.where("e.org_id", "in", [...scope.orgs]);
  for (const f of filters) query = query.where((eb) => condition(eb, f));
  return query;
}

function condition(eb: ExpressionBuilder<Database & { e: Database["events"]; u: Database["users"] }, "e" | "u">, f: EventFilter) {
  if ("resource" in f) return eb.and([eb("e.aggregate_type", "=", f.resource.type), eb("e.aggregate_id", "=", f.resource.id)]);
  if ("resourceTypes" in f) return eb("e.aggregate_type", "in", f.resourceTypes);
  if ("editor" in f) return eb("e.creator", "=", f.editor);
  if ("orgId" in f) return eb("e.org_id", "=", f.orgId);
  if ("types" in f) {
    const any = [
      ...(f.types.length > 0 ? [eb("e.event_type", "in", f.types)] : []),
      ...f.groups.map((g) => eb("e.event_type", "like", `${g.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`)),
    ];
    return any.length > 0 ? eb.or(any) : eb.val(false);
  }
  return eb.and([...(f.since ? [eb("e.created_at", ">=", f.since)] : []), ...(f.until ? [eb("e.created_at", "<", f.until)] : [])]);
}

function toLogEvent(r: Row): LogEvent {
  return {
    at: { tx: r.tx, position: Number(r.instance_position) },
    type: r.event_type,
    resourceType: r.aggregate_type,
    resourceId: r.aggregate_id,
    sequence: Number(r.sequence),
    orgId: r.org_id,
    instanceId: r.instance_id,
    createdAt: r.created_at,
    editor: { userId: r.creator, displayName: r.editor_name, client: r.editor_client, ip: r.editor_ip, userAgent: r.editor_agent },
    payload: redactedPayload(r.event_type, r.payload),
  };
}
