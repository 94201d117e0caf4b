import { sql, type Kysely } from "kysely";

/**
 * Identity providers with their state policies, and settings. Both live in the system,
 * an instance or an organization: instance_id '' is the system (no instance), org_id '' an
 * instance's own row. Feature flags and the instance's default language move into the
 * settings (only values that differ from the built-in default, so that instances inherit
 * the system's from now on).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The system's own event numbering, as each instance has one (store/instance-sequence.ts).
  await sql`create sequence events_pos_system`.execute(db);

  await db.schema
    .createTable("idps")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("owner_type", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("state_policy", "text", (c) => c.notNull())
    .addColumn("options", "jsonb", (c) => c.notNull())
    .addColumn("config", "jsonb", (c) => c.notNull())
    .addColumn("client_secret", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("idps_context").on("idps").columns(["instance_id", "org_id"]).execute();

  // A child context's policy for a provider defined above it; INHERIT is the absence of a row.
  await db.schema
    .createTable("idp_state_policies")
    .addColumn("idp_id", "text", (c) => c.notNull())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("policy", "text", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("idp_state_policies_pkey", ["idp_id", "instance_id", "org_id"])
    .execute();
  await db.schema.createIndex("idp_state_policies_context").on("idp_state_policies").columns(["instance_id", "org_id"]).execute();

  // One row per context and kind of settings: the properties set there, absent keys inherit.
  await db.schema
    .createTable("settings")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("properties", "jsonb", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("settings_pkey", ["instance_id", "org_id", "kind"])
    .execute();
  await sql`insert into settings (instance_id, org_id, kind, properties, change_date, sequence)
    select instance_id, '', 'feature', jsonb_object_agg(name, enabled), max(change_date), 0
    from instance_features group by instance_id`.execute(db);
  // Languages were BCP 47 tags and are now the supported ISO 639-1 codes: "de-CH" becomes
  // "de"; a language without texts falls back to the system's default.
  await sql`insert into settings (instance_id, org_id, kind, properties, change_date, sequence)
    select id, '', 'language', jsonb_build_object('default_language', code), change_date, 0
    from (select id, change_date, lower(split_part(default_language, '-', 1)) as code from instances) i
    where code in ('de', 'fr', 'it', 'es', 'pt', 'nl', 'pl', 'ja', 'zh')`.execute(db);
  await db.schema.dropTable("instance_features").execute();
  await sql`alter table instances drop column default_language`.execute(db);
}
