import { sql } from "kysely";
import type { Db } from "./db.js";
import { instanceSequence } from "./instance-sequence.js";

/** The aggregate type of sign-in events (domain/audit/sign-ins.ts): rows of `events` that no aggregate replays. */
export const SIGN_IN_AGGREGATE = "signin";

/** One sign-in event as written: the columns of `events` it sets. */
export interface SignInRow {
  instanceId: string;
  /** The user's id; '' when the attempt named no account. */
  aggregateId: string;
  orgId: string;
  type: string;
  payload: Record<string, unknown>;
  /** The user's id, or "anonymous". */
  creator: string;
  client: string | null;
  ip: string | null;
  userAgent: string | null;
  /** When the attempt was made (a summary: when its window ended), not when the row was written. */
  at: Date;
}

/** Rows per statement: their one JSON parameter stays small enough to parse at once. */
const CHUNK = 500;

/**
 * Writes sign-in events, one statement per CHUNK rows. Not through appendEvents: they belong
 * to no aggregate with a sequence of its own, and no append hook is to run for them. Each row
 * takes one number of its instance's sequence for both its instance position and its
 * sequence, so that (instance, aggregate, sequence) stays unique without a counter row.
 */
export async function insertSignIns(db: Db, rows: readonly SignInRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK).map((r) => ({
      instance_id: r.instanceId,
      numbered: instanceSequence(r.instanceId),
      aggregate_id: r.aggregateId,
      org_id: r.orgId,
      event_type: r.type,
      payload: r.payload,
      creator: r.creator,
      editor_client: r.client,
      editor_ip: r.ip,
      editor_agent: r.userAgent,
      created_at: r.at.toISOString(),
    }));
    // nextval is taken once per row and used twice: a subquery with a volatile column is never flattened into its caller.
    await sql`
      insert into events (instance_id, aggregate_type, aggregate_id, org_id, sequence, instance_position, event_type, payload, creator, editor_client, editor_ip, editor_agent, created_at)
      select r.instance_id, ${SIGN_IN_AGGREGATE}, r.aggregate_id, r.org_id, r.n, r.n, r.event_type, r.payload, r.creator, r.editor_client, r.editor_ip, r.editor_agent, r.created_at
      from (
        select x.*, nextval(x.numbered::regclass) as n
        from jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) as x(
          instance_id text, numbered text, aggregate_id text, org_id text, event_type text, payload jsonb,
          creator text, editor_client text, editor_ip text, editor_agent text, created_at timestamptz)
      ) r`.execute(db);
  }
}
