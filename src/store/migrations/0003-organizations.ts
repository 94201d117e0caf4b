import { sql, type Kysely } from "kysely";

/**
 * Organizations get a state, names unique per instance regardless of case, and domains.
 * Organizations of earlier versions get their generated domain here, from the projection
 * alone: they were created before domains had events, and replaying them needs none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table orgs add column state text not null default 'active'`.execute(db);
  await sql`create unique index orgs_instance_name on orgs (instance_id, lower(name))`.execute(db);

  await db.schema
    .createTable("org_domains")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("domain", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("is_primary", "boolean", (c) => c.notNull())
    .addColumn("is_verified", "boolean", (c) => c.notNull())
    .addColumn("is_generated", "boolean", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("org_domains_pkey", ["instance_id", "domain"])
    .execute();
  await db.schema.createIndex("org_domains_org").on("org_domains").columns(["instance_id", "org_id"]).execute();
  // At most one primary domain per organization.
  await sql`create unique index org_domains_primary on org_domains (instance_id, org_id) where is_primary`.execute(db);

  await sql`insert into org_domains (instance_id, domain, org_id, is_primary, is_verified, is_generated, created_at, change_date, sequence)
    select instance_id, label || case when n > 1 then '-' || n else '' end || '.' || domain, id, true, true, true, created_at, change_date, sequence
    from (select o.*, d.domain, l.label, row_number() over (partition by o.instance_id, l.label order by o.created_at, o.id) as n
          from orgs o
          join instance_domains d on d.instance_id = o.instance_id and d.is_primary
          cross join lateral (select coalesce(nullif(rtrim(left(trim(both '-' from regexp_replace(lower(o.name), '[^a-z0-9]+', '-', 'g')), 57), '-'), ''), 'org') as label) l) labelled`.execute(
    db,
  );
}
