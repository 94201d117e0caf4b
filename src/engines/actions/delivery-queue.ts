import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { outboxTable } from "../queue/outbox-table.js";

/**
 * A claim is a lease: a worker killed while holding it leaves the row to come back when it
 * runs out. It must outlast the call (the target's timeout) and the writing of its result
 * (this margin). Claims take CLAIM_LEASE_S, enough for targets of the default 10 s timeout;
 * a longer target's lease is extended before the call (deliveries.extendLease). The claim
 * reads only this table, so a lock on another (say, targets) never holds up the claiming.
 */
export const LEASE_MARGIN_S = 10;
export const CLAIM_LEASE_S = 20;

/**
 * The outbox of event executions (outbox.ts writes it). Only the head of each (aggregate,
 * target) queue is due: a later event of an aggregate waits while an earlier one to the same
 * target is pending, claimed or not.
 */
export const deliveries = outboxTable({
  table: "action_deliveries",
  claimed: ["instance_id", "id", "event_position", "aggregate_type", "aggregate_id", "target_id", "attempts", "window_start"],
  due: sql`not exists (
            select 1 from action_deliveries e
            where e.instance_id = c.instance_id and e.target_id = c.target_id
              and e.aggregate_type = c.aggregate_type and e.aggregate_id = c.aggregate_id
              and e.status = 'pending' and e.event_sequence < c.event_sequence)`,
  thenBy: "event_position",
  done: { status: "delivered", at: "delivered_at" },
});

export type Claimed = Awaited<ReturnType<typeof deliveries.claim>>[number];

/** Claims up to `limit` due deliveries for `claimId` (outboxTable's claim). */
export async function claimDue(db: Db, claimId: string, limit: number): Promise<Claimed[]> {
  const rows = await deliveries.claim(db, claimId, limit, CLAIM_LEASE_S);
  return rows.map((r) => ({ ...r, event_position: Number(r.event_position) }));
}

export type Result =
  { kind: "delivered"; status: number } | { kind: "retry"; at: Date; error: string; status?: number } | { kind: "failed"; error: string; status?: number };

/** Writes a call's result, with the target's last HTTP status, while the claim is still this worker's. */
export function complete(db: Db, row: Claimed, claimId: string, result: Result): Promise<boolean> {
  return deliveries.finish(db, row, claimId, result.kind === "delivered" ? { kind: "done" } : result, {
    last_status: "status" in result ? (result.status ?? null) : null,
  });
}
