import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import type { NotificationRow } from "../../store/schema.js";

export type ClaimedNotification = Pick<NotificationRow, "instance_id" | "id" | "org_id" | "user_id" | "kind" | "channel" | "recipient" | "attempts" | "sealed_data" | "created_at" | "expires_at">;

/**
 * Claims up to `limit` due messages for `claimId` in one statement: a lease of `leaseS`
 * seconds (it must outlast a send), taken with SKIP LOCKED so that any number of workers
 * claim at once and none takes a row twice. The attempt is counted here, so one cut short
 * by a crash still counts.
 */
export async function claimDueNotifications(db: Db, claimId: string, limit: number, leaseS: number): Promise<ClaimedNotification[]> {
  const { rows } = await sql<ClaimedNotification>`
    update notifications n
    set claim_id = ${claimId},
        attempts = n.attempts + 1,
        claimed_until = now() + make_interval(secs => ${leaseS})
    where (n.instance_id, n.id) in (
      select c.instance_id, c.id from notifications c
      where c.status = 'pending'
        and c.next_attempt_at <= now()
        and (c.claimed_until is null or c.claimed_until < now())
      order by c.next_attempt_at
      limit ${limit}
      for update of c skip locked)
    returning n.instance_id, n.id, n.org_id, n.user_id, n.kind, n.channel, n.recipient, n.attempts, n.sealed_data, n.created_at, n.expires_at`.execute(db);
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

export type NotificationResult =
  | { kind: "sent"; language: string }
  /** Tried again at `at`; `counts` false when no attempt was made (no provider yet). */
  | { kind: "retry"; at: Date; error: string; counts: boolean; language?: string }
  | { kind: "failed"; error: string; language?: string };

/**
 * Writes a send's result while the claim is still this worker's (a late result after the
 * lease ran out is dropped: the new holder's counts). A sent message loses its sealed
 * content at once; a failed one keeps it until it expires (sweep.ts), so that
 * RetryNotification can send it again while its code is still good.
 */
export async function completeNotification(db: Db, row: ClaimedNotification, claimId: string, result: NotificationResult): Promise<boolean> {
  const released = { claim_id: null, claimed_until: null, ...(result.language !== undefined && { language: result.language }) };
  const set =
    result.kind === "sent"
      ? { ...released, status: "sent" as const, sent_at: new Date(), last_error: null, sealed_data: null }
      : result.kind === "retry"
        ? { ...released, next_attempt_at: result.at, last_error: result.error.slice(0, 1000), ...(!result.counts && { attempts: sql<number>`attempts - 1` }) }
        : { ...released, status: "failed" as const, last_error: result.error.slice(0, 1000) };
  const done = await db
    .updateTable("notifications")
    .set(set)
    .where("instance_id", "=", row.instance_id)
    .where("id", "=", row.id)
    .where("claim_id", "=", claimId)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** Waiting messages of every instance, per channel (metrics). */
export async function pendingNotifications(db: Db): Promise<{ channel: string; n: number }[]> {
  const rows = await db.selectFrom("notifications").select(["channel", (eb) => eb.fn.countAll<number>().as("n")]).where("status", "=", "pending").groupBy("channel").execute();
  return rows.map((r) => ({ channel: r.channel, n: Number(r.n) }));
}
