import { sql } from "kysely";
import type { Tx } from "./db.js";
import type { AggregateRef } from "./events.js";

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
