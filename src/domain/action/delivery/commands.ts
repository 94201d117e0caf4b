import type { Tx } from "../../../store/eventstore.js";
import type { ActionDeliveryRow } from "../../../store/schema.js";
import { failedPrecondition, notFound } from "../../errors.js";

/**
 * Makes a failed delivery pending again, due at once, with its maximum age counted anew
 * from now. Deliveries are the outbox of events, not aggregates of their own: a retry
 * changes the row and writes no event (which could itself match an execution). Only failed
 * ones: a pending one is being tried already, a delivered one was accepted.
 */
export async function retryDelivery(tx: Tx, instanceId: string, id: string): Promise<ActionDeliveryRow> {
  const current = await tx.selectFrom("action_deliveries").select("status").where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!current) throw notFound(`delivery ${id} not found`);
  if (current.status !== "failed") throw failedPrecondition(`delivery ${id} is ${current.status}; only failed deliveries can be retried`);
  const now = new Date();
  return tx
    .updateTable("action_deliveries")
    .set({ status: "pending", next_attempt_at: now, window_start: now, claim_id: null, claimed_until: null })
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
