import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { SIGN_IN_AGGREGATE } from "../../store/sign-in-log.js";

/**
 * Deletes up to `limit` sign-in events (aggregate `signin`) of every instance created longer
 * ago than its audit log retention, or `defaultRetentionMs` where it has none. Sign-in
 * attempts are a log, not a resource's history: nothing is rebuilt from them, and unbounded
 * they would grow with every login. The events of resources stay (their sequences and the
 * projections rest on them); the log only stops listing them past the retention.
 * Each instance's oldest sign-ins are read through (instance_id, aggregate_type, position), so
 * a run costs about what it deletes; rows another sweeper holds are skipped.
 */
export async function sweepSignInEvents(db: Db, defaultRetentionMs: number, limit: number): Promise<number> {
  const result = await sql`
    delete from events
    where position in (
      select old.position from instances i
      cross join lateral (
        select e.position from events e
        where e.instance_id = i.id and e.aggregate_type = ${SIGN_IN_AGGREGATE}
          and e.created_at < now() - coalesce(i.audit_log_retention_ms, ${defaultRetentionMs}) * interval '1 millisecond'
        order by e.position
        limit ${limit}
        for update of e skip locked) old
      limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
