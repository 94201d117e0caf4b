import { sql, type Kysely } from "kysely";

/**
 * What the audit log (domain/audit) needs of each event beyond what replaying it needs:
 * - `org_id`, the resource's organization, so that an organization's owners read its events
 *   and no others, including those of resources since removed (whose rows are gone). Events
 *   written before this migration get it from the rows that still exist; the rest stay the
 *   instance's ('', shown to instance owners only).
 * - `editor_client`, `editor_ip`, `editor_agent`: where a change came from over HTTP.
 * - `tx_id`: the writing transaction (pg_current_xact_id()). Events become readable in
 *   (tx_id, instance_position) order once every older transaction is done, which is what lets
 *   a stream resume after an event without missing one that committed after it. The existing
 *   rows all take this migration's id: older than any later write, as they are.
 *
 * The two indexes serve the log's reads in that order, for an instance and for one
 * organization; a resource's history reads the unique index on its sequence.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table events
      add column org_id text not null default '',
      add column editor_client text,
      add column editor_ip text,
      add column editor_agent text,
      add column tx_id xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`update events set org_id = aggregate_id where aggregate_type = 'org'`.execute(db);
  for (const [aggregate, table] of [
    ["user", "users"],
    ["project", "projects"],
    ["app", "apps"],
    ["user_grant", "user_grants"],
  ] as const) {
    await sql`
      update events e set org_id = r.org_id from ${sql.table(table)} r
      where e.aggregate_type = ${aggregate} and r.instance_id = e.instance_id and r.id = e.aggregate_id`.execute(db);
  }
  await sql`create index events_audit_instance on events (instance_id, tx_id, instance_position)`.execute(db);
  await sql`create index events_audit_org on events (instance_id, org_id, tx_id, instance_position) where org_id <> ''`.execute(db);
}
