import type { Tx } from "../../../store/db.js";
import type { ActionDeliveryRow } from "../../../store/schema.js";
import { failedPrecondition, notFound } from "../../errors.js";

/**
 * Sends a finished delivery again, delivered or failed alike (a receiver that lost an event
 * asks for it again, as webhook providers allow): it becomes pending, due at once, with its
 * maximum age counted anew from now; the worker's call is its next attempt. A pending one is
 * being tried already. Deliveries are the outbox of events, not aggregates of their own: a
 * retry changes the row and writes no event (which could itself match an execution). A
 * worker whose lease ran out cannot overwrite it: its claim is cleared.
 */
export async function retryDelivery(tx: Tx, instanceId: string, id: string): Promise<ActionDeliveryRow> {
  const current = await tx
    .selectFrom("action_deliveries")
    .select("status")
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw notFound(`delivery ${id} not found`);
  if (current.status === "pending") throw failedPrecondition(`delivery ${id} is pending: it is being tried already`);
  const now = new Date();
  return tx
    .updateTable("action_deliveries")
    .set({ status: "pending", next_attempt_at: now, window_start: now, claim_id: null, claimed_until: null, delivered_at: null })
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
