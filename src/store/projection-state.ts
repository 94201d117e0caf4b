import { sql, type RawBuilder } from "kysely";
import type { Db } from "./db.js";
import { changedBy } from "./projection-sources.js";

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
async function projectionState(db: Db, instanceId: string, aggregateType: string): Promise<ProjectionState> {
  const { rows } = await sql<{
    instance_position: number;
    created_at: Date;
  }>`${newestEvent(instanceId, aggregateType, sql`e.instance_position, e.created_at`)}`.execute(db);
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
