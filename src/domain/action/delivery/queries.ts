import type { Db } from "../../../store/eventstore.js";
import type { ActionDeliveryRow, DeliveryStatus } from "../../../store/schema.js";
import type { Found, Page } from "../../../store/search.js";

export type DeliveryFilter =
  | { target: string }
  | { execution: string }
  | { eventType: string }
  | { status: DeliveryStatus }
  | { since?: Date; until?: Date };

/**
 * The delivery log of an instance, by creation date (ties by id). It reaches back as far as
 * the instance's audit log retention when one is set: what is older is not shown, as
 * for the events themselves. `state` is the instance's newest event: deliveries are
 * written with their events, so the log is complete up to it.
 */
export async function searchDeliveries(db: Db, instanceId: string, filters: DeliveryFilter[], page: Page, now = new Date()): Promise<Found<ActionDeliveryRow>> {
  const instance = await db.selectFrom("instances").select("audit_log_retention_ms").where("id", "=", instanceId).executeTakeFirst();
  let query = db.selectFrom("action_deliveries").where("instance_id", "=", instanceId);
  if (instance?.audit_log_retention_ms) query = query.where("created_at", ">=", new Date(now.getTime() - Number(instance.audit_log_retention_ms)));
  for (const f of filters) {
    if ("target" in f) query = query.where("target_id", "=", f.target);
    else if ("execution" in f) query = query.where("execution_id", "=", f.execution);
    else if ("eventType" in f) query = query.where("event_type", "=", f.eventType);
    else if ("status" in f) query = query.where("status", "=", f.status);
    else {
      if (f.since) query = query.where("created_at", ">=", f.since);
      if (f.until) query = query.where("created_at", "<", f.until);
    }
  }
  const direction = page.asc ? "asc" : "desc";
  const [rows, newest] = await Promise.all([
    query
      .selectAll()
      .select((eb) => eb.fn.countAll<number>().over().as("total"))
      .orderBy("created_at", direction)
      .orderBy("id", direction)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db.selectFrom("events").select(["instance_position", "created_at"]).where("instance_id", "=", instanceId).orderBy("instance_position", "desc").limit(1).executeTakeFirst(),
  ]);
  const state = { position: newest?.instance_position ?? 0, timestamp: newest?.created_at };
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (rows.length === 0 && page.offset > 0) {
    total = Number((await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
  }
  return { rows: rows.map(({ total: _, ...row }) => ({ ...row, event_sequence: Number(row.event_sequence), event_position: Number(row.event_position) })), total, state };
}
