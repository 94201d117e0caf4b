import type { Db } from "../../store/db.js";
import { logPage, retentionFloor } from "../../store/log-search.js";
import type { NotificationRow } from "../../store/schema.js";
import type { Found, Page } from "../../store/search.js";

export type NotificationStatus = NotificationRow["status"];

export type NotificationFilter =
  { userId: string } | { kind: string } | { channel: "email" | "sms" } | { status: NotificationStatus } | { since?: Date; until?: Date };

/** The message log of an instance, by creation date, as far back as its audit log retention. */
export async function searchNotifications(
  db: Db,
  instanceId: string,
  filters: NotificationFilter[],
  page: Page,
  now = new Date(),
): Promise<Found<NotificationRow>> {
  const floor = await retentionFloor(db, instanceId, now);
  let query = db.selectFrom("notifications").where("instance_id", "=", instanceId);
  if (floor) query = query.where("created_at", ">=", floor);
  for (const f of filters) {
    if ("userId" in f) query = query.where("user_id", "=", f.userId);
    else if ("kind" in f) query = query.where("kind", "=", f.kind);
    else if ("channel" in f) query = query.where("channel", "=", f.channel);
    else if ("status" in f) query = query.where("status", "=", f.status);
    else {
      if (f.since) query = query.where("created_at", ">=", f.since);
      if (f.until) query = query.where("created_at", "<", f.until);
    }
  }
  const found = await logPage(db, instanceId, query, page);
  return { ...found, rows: found.rows.map((row) => ({ ...row, attempts: Number(row.attempts) })) };
}
