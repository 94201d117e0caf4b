import { sql, type Kysely } from "kysely";

/**
 * The outbox of event executions: one row per (event, target), written in the transaction
 * that appends the event (actions/outbox.ts), so a committed event never lacks its
 * deliveries and a rolled back one never has any. Workers of every process claim due rows
 * (actions/delivery-worker.ts); the rows stay as the delivery log afterwards.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("action_deliveries")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("event_position", "bigint", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("aggregate_type", "text", (c) => c.notNull())
    .addColumn("aggregate_id", "text", (c) => c.notNull())
    .addColumn("event_sequence", "bigint", (c) => c.notNull())
    .addColumn("target_id", "text", (c) => c.notNull())
    .addColumn("execution_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
    // A claim is a lease: a worker that died with it leaves a row that comes back when it ends.
    .addColumn("claimed_until", "timestamptz")
    .addColumn("claim_id", "text")
    .addColumn("last_error", "text")
    .addColumn("last_status", "integer")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    // The maximum age counts from here: the creation, or the last RetryDelivery.
    .addColumn("window_start", "timestamptz", (c) => c.notNull())
    .addColumn("delivered_at", "timestamptz")
    .addPrimaryKeyConstraint("action_deliveries_pkey", ["instance_id", "id"])
    .addUniqueConstraint("action_deliveries_event_target", ["instance_id", "aggregate_type", "aggregate_id", "event_sequence", "target_id"])
    .execute();
  // Claiming: due pending rows, across instances.
  await db.schema
    .createIndex("action_deliveries_due")
    .on("action_deliveries")
    .columns(["next_attempt_at", "event_position"])
    .where(sql.ref("status"), "=", "pending")
    .execute();
  // Ordering: an earlier pending row of the same aggregate and target holds the later ones back.
  await db.schema
    .createIndex("action_deliveries_queue")
    .on("action_deliveries")
    .columns(["instance_id", "target_id", "aggregate_type", "aggregate_id", "event_sequence"])
    .where(sql.ref("status"), "=", "pending")
    .execute();
  // The delivery log, newest first.
  await db.schema.createIndex("action_deliveries_log").on("action_deliveries").columns(["instance_id", "created_at", "id"]).execute();
}
