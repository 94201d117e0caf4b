import { sql, type Kysely, type RawBuilder } from "kysely";

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
const byId = sql`r.id = e.aggregate_id`;

/**
 * Where each organization-owned aggregate's organization is still found: the table, its
 * column holding the organization's id, and how an event names the row. Credentials are
 * found by their owner named in every event's payload, not by their own rows, so that the
 * events of a token or key since removed get their organization too. Sessions are left out:
 * no row says which of a session's events came after its user was known.
 */
const BACKFILLS: { events: RawBuilder<unknown>; table: string; org: string; row: RawBuilder<unknown> }[] = [
  { events: sql`e.aggregate_type = 'user'`, table: "users", org: "org_id", row: byId },
  { events: sql`e.aggregate_type = 'project'`, table: "projects", org: "org_id", row: byId },
  { events: sql`e.aggregate_type = 'app'`, table: "apps", org: "org_id", row: byId },
  { events: sql`e.aggregate_type = 'user_grant'`, table: "user_grants", org: "org_id", row: byId },
  { events: sql`e.aggregate_type in ('pat', 'user_key')`, table: "users", org: "org_id", row: sql`r.id = e.payload->>'userId'` },
  { events: sql`e.aggregate_type = 'app_key'`, table: "apps", org: "org_id", row: sql`r.id = e.payload->>'appId'` },
  { events: sql`e.aggregate_type = 'idp'`, table: "idps", org: "org_id", row: byId },
  { events: sql`e.aggregate_type = 'idp_intent'`, table: "idp_intents", org: "org_id", row: byId },
  // One aggregate per provider holds every context's policy: each event names its context's organization.
  { events: sql`e.aggregate_type = 'idp.policy'`, table: "orgs", org: "id", row: sql`r.id = e.payload->>'orgId'` },
  // An organization's settings of a kind are the aggregate of its id; an instance's, of the instance's id.
  { events: sql`e.aggregate_type like 'settings.%'`, table: "orgs", org: "id", row: byId },
  // A membership's aggregate is `<context type>/<context id>/<user id>`; organization ids are generated, without '/'.
  {
    events: sql`e.aggregate_type = 'membership' and e.aggregate_id like 'org/%'`,
    table: "orgs",
    org: "id",
    row: sql`r.id = split_part(e.aggregate_id, '/', 2)`,
  },
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table events
      add column org_id text not null default '',
      add column editor_client text,
      add column editor_ip text,
      add column editor_agent text,
      add column tx_id xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`update events set org_id = aggregate_id where aggregate_type = 'org'`.execute(db);
  for (const { events, table, org, row } of BACKFILLS) {
    await sql`
      update events e set org_id = ${sql.ref(`r.${org}`)} from ${sql.table(table)} r
      where ${events} and r.instance_id = e.instance_id and ${row}`.execute(db);
  }
  await sql`create index events_audit_instance on events (instance_id, tx_id, instance_position)`.execute(db);
  await sql`create index events_audit_org on events (instance_id, org_id, tx_id, instance_position)`.execute(db);
}
