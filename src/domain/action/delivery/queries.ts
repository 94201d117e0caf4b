import type { Db } from "../../../store/db.js";
import type { ActionDeliveryRow } from "../../../store/schema.js";
import { logPage, retentionFloor } from "../../../store/log-search.js";
import type { Found, Page } from "../../../store/search.js";

export type DeliveryStatus = ActionDeliveryRow["status"];

export type DeliveryFilter = { target: string } | { execution: string } | { eventType: string } | { status: DeliveryStatus } | { since?: Date; until?: Date };

/**
 * The delivery log of an instance, by creation date, reaching back as far as the instance's
 * audit log retention (store/log-search.ts).
 */
export async function searchDeliveries(db: Db, instanceId: string, filters: DeliveryFilter[], page: Page, now = new Date()): Promise<Found<ActionDeliveryRow>> {
  const floor = await retentionFloor(db, instanceId, now);
  let query = db.selectFrom("action_deliveries").where("instance_id", "=", instanceId);
  if (floor) query = query.where("created_at", ">=", floor);
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
  const found = await logPage(db, instanceId, query, page);
  return { ...found, rows: found.rows.map((row) => ({ ...row, event_sequence: Number(row.event_sequence), event_position: Number(row.event_position) })) };
}
