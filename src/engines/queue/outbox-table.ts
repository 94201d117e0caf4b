import { sql, type RawBuilder, type Selectable, type UpdateObject } from "kysely";
import type { Db } from "../../store/db.js";
import { sweepFinishedLogRows } from "../../store/log-retention.js";
import type { Database } from "../../store/schema.js";

/** The engines' outboxes: rows tried under a lease until done, or given up as failed. */
export type OutboxTableName = "action_deliveries" | "notifications";

type Row<T extends OutboxTableName> = Selectable<Database[T]>;

/** What identifies a claimed row. */
export interface ClaimedKey {
  instance_id: string;
  id: string;
}

/** How an attempt ended, in the terms every outbox shares. */
export type Outcome = { kind: "done" } | { kind: "retry"; at: Date; error: string } | { kind: "failed"; error: string };

/** Errors are kept for the log and the API, not whole answers. */
const ERROR_MAX_CHARS = 1000;

export interface OutboxTableOptions<T extends OutboxTableName, C extends keyof Row<T> & string> {
  table: T;
  /** What a claim returns: what the engine needs to work a row. */
  claimed: readonly C[];
  /** A further condition on a due row `c` (action deliveries: only the head of each queue). */
  due?: RawBuilder<unknown>;
  /** Ordered after `next_attempt_at`, as the claim's index has it. */
  thenBy?: keyof Row<T> & string;
  /** A done row's status and the column of its time. */
  done: { status: Database[T]["status"]; at: keyof Row<T> & string };
}

/**
 * The table layer of an engine's outbox (queue/claim-loop.ts works it): claims, leases and
 * results, written the same way for every outbox so that each engine keeps only what its
 * rows carry and how they are sent.
 */
export function outboxTable<T extends OutboxTableName, C extends keyof Row<T> & string>(o: OutboxTableOptions<T, C>) {
  type Claimed = Pick<Row<T>, C>;
  const table = sql.table(o.table);
  const whileClaimed = (db: Db, row: ClaimedKey, claimId: string) =>
    db
      .updateTable(o.table as OutboxTableName)
      .where("instance_id", "=", row.instance_id)
      .where("id", "=", row.id)
      .where("claim_id", "=", claimId);
  return {
    /**
     * Claims up to `limit` due rows for `claimId` in one short statement (no transaction stays
     * open during sends): a lease of `leaseS` seconds, taken with SKIP LOCKED so that any
     * number of workers claim at once and none takes a row twice; a claimed row comes back
     * when its lease runs out. The attempt is counted here, so one cut short by a crash counts.
     */
    async claim(db: Db, claimId: string, limit: number, leaseS: number): Promise<Claimed[]> {
      const { rows } = await sql<Claimed>`
        update ${table} o
        set claim_id = ${claimId},
            attempts = o.attempts + 1,
            claimed_until = now() + make_interval(secs => ${leaseS})
        where (o.instance_id, o.id) in (
          select c.instance_id, c.id from ${table} c
          where c.status = 'pending'
            and c.next_attempt_at <= now()
            and (c.claimed_until is null or c.claimed_until < now())${
              o.due
                ? sql`
            and ${o.due}`
                : sql``
            }
          order by c.next_attempt_at${o.thenBy ? sql`, ${sql.ref(`c.${o.thenBy}`)}` : sql``}
          limit ${limit}
          for update of c skip locked)
        returning ${sql.join(o.claimed.map((column) => sql.ref(`o.${column}`)))}`.execute(db);
      return rows.map((r) => ("attempts" in r ? { ...r, attempts: Number(r.attempts) } : r));
    },

    /** Makes a claim last `seconds` from now; false when it is no longer this worker's. */
    async extendLease(db: Db, row: ClaimedKey, claimId: string, seconds: number): Promise<boolean> {
      const done = await whileClaimed(db, row, claimId)
        .set({ claimed_until: sql<Date>`now() + make_interval(secs => ${seconds})` })
        .executeTakeFirst();
      return Number(done.numUpdatedRows) > 0;
    },

    /**
     * Writes an attempt's outcome, with the engine's own columns (`also`), and releases the
     * claim, only while it is still this worker's: after a lease ran out and another worker
     * took the row, the late result is dropped (the new holder's counts).
     */
    async finish(db: Db, row: ClaimedKey, claimId: string, outcome: Outcome, also: UpdateObject<Database, T>): Promise<boolean> {
      const written =
        outcome.kind === "done"
          ? { status: o.done.status, [o.done.at]: new Date(), last_error: null }
          : outcome.kind === "retry"
            ? { next_attempt_at: outcome.at, last_error: outcome.error.slice(0, ERROR_MAX_CHARS) }
            : { status: "failed", last_error: outcome.error.slice(0, ERROR_MAX_CHARS) };
      // The engine's columns are checked against its own table above; Kysely types the shared builder by both tables' common columns.
      const set = { claim_id: null, claimed_until: null, ...also, ...written } as UpdateObject<Database, OutboxTableName>;
      const done = await whileClaimed(db, row, claimId).set(set).executeTakeFirst();
      return Number(done.numUpdatedRows) > 0;
    },

    /** Pending rows of every instance, per value of `column` (metrics). */
    async pendingBy(db: Db, column: keyof Row<T> & string): Promise<Map<string, number>> {
      const { rows } = await sql<{ key: string; n: number }>`
        select ${sql.ref(column)} as key, count(*) as n from ${table} where status = 'pending' group by ${sql.ref(column)}`.execute(db);
      return new Map(rows.map((r) => [r.key, Number(r.n)]));
    },

    /** Pending rows of every instance: the backlog (metrics). */
    async pending(db: Db): Promise<number> {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${table} where status = 'pending'`.execute(db);
      return Number(rows[0]!.n);
    },

    /** Deletes up to `limit` finished rows past their instance's retention (store/log-retention.ts). */
    sweepFinished: (db: Db, defaultRetentionMs: number, limit: number) => sweepFinishedLogRows(db, o.table, defaultRetentionMs, limit),
  };
}
