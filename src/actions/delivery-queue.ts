import { sql } from "kysely";
import type { Db } from "../store/db.js";
import type { ActionDeliveryRow } from "../store/schema.js";

/**
 * A claim is a lease: a worker killed while holding it leaves the row to come back when it
 * runs out. It must outlast the call (the target's timeout) and the writing of its result
 * (this margin). Claims take CLAIM_LEASE_S, enough for targets of the default 10 s timeout;
 * a longer target's lease is extended before the call (extendLease). The claim reads only
 * this table, so a lock on another (say, targets) never holds up the claiming.
 */
export const LEASE_MARGIN_S = 10;
export const CLAIM_LEASE_S = 20;

export type Claimed = Pick<ActionDeliveryRow, "instance_id" | "id" | "event_position" | "aggregate_type" | "aggregate_id" | "target_id" | "attempts" | "window_start">;

/**
 * Claims up to `limit` due deliveries for `claimId`, in one short statement (no transaction
 * stays open during calls). Only the head of each (aggregate, target) queue is due: a
 * later event of an aggregate waits while an earlier one to the same target is pending,
 * claimed or not. SKIP LOCKED lets any number of workers claim at once without taking a
 * row twice; the lease keeps a claimed row from being claimed again until it runs out.
 * The attempt is counted here, so a call cut short by a crash still counts.
 */
export async function claimDue(db: Db, claimId: string, limit: number): Promise<Claimed[]> {
  const { rows } = await sql<Claimed>`
    update action_deliveries d
    set claim_id = ${claimId},
        attempts = d.attempts + 1,
        claimed_until = now() + make_interval(secs => ${CLAIM_LEASE_S})
    where (d.instance_id, d.id) in (
      select c.instance_id, c.id from action_deliveries c
      where c.status = 'pending'
        and c.next_attempt_at <= now()
        and (c.claimed_until is null or c.claimed_until < now())
        and not exists (
          select 1 from action_deliveries e
          where e.instance_id = c.instance_id and e.target_id = c.target_id
            and e.aggregate_type = c.aggregate_type and e.aggregate_id = c.aggregate_id
            and e.status = 'pending' and e.event_sequence < c.event_sequence)
      order by c.next_attempt_at, c.event_position
      limit ${limit}
      for update of c skip locked)
    returning d.instance_id, d.id, d.event_position, d.aggregate_type, d.aggregate_id, d.target_id, d.attempts, d.window_start`.execute(db);
  return rows.map((r) => ({ ...r, event_position: Number(r.event_position), attempts: Number(r.attempts) }));
}

/** Makes a claim last `seconds` from now; false when it is no longer this worker's. */
export async function extendLease(db: Db, row: Claimed, claimId: string, seconds: number): Promise<boolean> {
  const done = await db
    .updateTable("action_deliveries")
    .set({ claimed_until: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where("instance_id", "=", row.instance_id)
    .where("id", "=", row.id)
    .where("claim_id", "=", claimId)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

export type Result =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; at: Date; error: string; status?: number }
  | { kind: "failed"; error: string; status?: number };

/**
 * Writes a call's result, only while the claim is still this worker's: after a lease ran
 * out and another worker took the row, the late result is dropped (that worker's counts).
 */
export async function complete(db: Db, row: Claimed, claimId: string, result: Result): Promise<boolean> {
  const released = { claim_id: null, claimed_until: null, last_status: "status" in result ? (result.status ?? null) : null };
  const set =
    result.kind === "delivered"
      ? { ...released, status: "delivered" as const, delivered_at: new Date(), last_error: null }
      : result.kind === "retry"
        ? { ...released, next_attempt_at: result.at, last_error: result.error.slice(0, 1000) }
        : { ...released, status: "failed" as const, last_error: result.error.slice(0, 1000) };
  const done = await db
    .updateTable("action_deliveries")
    .set(set)
    .where("instance_id", "=", row.instance_id)
    .where("id", "=", row.id)
    .where("claim_id", "=", claimId)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** Pending deliveries of every instance: the backlog (metrics). */
export async function pendingCount(db: Db): Promise<number> {
  const row = await db.selectFrom("action_deliveries").select((eb) => eb.fn.countAll<number>().as("n")).where("status", "=", "pending").executeTakeFirstOrThrow();
  return Number(row.n);
}
