import type { Tx } from "../../store/db.js";
import type { NotificationRow } from "../../store/schema.js";
import { failedPrecondition, notFound } from "../errors.js";

/**
 * Sends a failed message again: pending, due at once, its attempts counted afresh (the
 * maximum age still counts from its creation, and its expiry stands). A sent message's
 * content is gone (codes are not kept), and an expired one's code is stale: the user asks
 * for a new code instead. Messages are an outbox, not aggregates: a retry writes no event.
 */
export async function retryNotification(tx: Tx, instanceId: string, id: string, now = new Date()): Promise<NotificationRow> {
  const current = await tx
    .selectFrom("notifications")
    .select(["status", "sealed_data", "expires_at"])
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw notFound(`notification ${id} not found`);
  if (current.status === "pending") throw failedPrecondition(`notification ${id} is pending: it is being tried already`);
  if (current.status === "sent") throw failedPrecondition(`notification ${id} was sent; what it said is not kept, so ask for a new code instead`);
  if (current.sealed_data === null || new Date(current.expires_at) <= now)
    throw failedPrecondition(`notification ${id} has expired; ask for a new code instead`);
  const row = await tx
    .updateTable("notifications")
    .set({ status: "pending", next_attempt_at: now, attempts: 0, claim_id: null, claimed_until: null })
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...row, attempts: Number(row.attempts) };
}

/** Messages waiting for a provider of the channel go out at once when one is activated. */
export async function nudgeWaiting(tx: Tx, instanceId: string, channel: "email" | "sms"): Promise<void> {
  await tx
    .updateTable("notifications")
    .set({ next_attempt_at: new Date() })
    .where("instance_id", "=", instanceId)
    .where("channel", "=", channel)
    .where("status", "=", "pending")
    .execute();
}
