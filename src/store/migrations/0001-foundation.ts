import { sql, type Kysely } from "kysely";

/** Runs on PostgreSQL 15 and on PGlite (PostgreSQL 18): only features both have. */
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable("events")
    .addColumn("position", "bigint", (c) => c.generatedAlwaysAsIdentity().primaryKey())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("aggregate_type", "text", (c) => c.notNull())
    .addColumn("aggregate_id", "text", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("creator", "text", (c) => c.notNull())
    // The time of the insert, not of the transaction's start: a writer that waited for a
    // lock must not record a change date earlier than the event it waited for.
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addUniqueConstraint("events_aggregate_sequence", ["instance_id", "aggregate_type", "aggregate_id", "sequence"])
    .execute();
  await db.schema.createIndex("events_instance_type_position").on("events").columns(["instance_id", "aggregate_type", "position"]).execute();

  const projection = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn("instance_id", "text", (c) => c.notNull())
      .addColumn("id", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("change_date", "timestamptz", (c) => c.notNull())
      .addColumn("sequence", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint(`${name}_pkey`, ["instance_id", "id"]);

  await projection("instances")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("default_org_id", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("instance_domains")
    .addColumn("domain", "text", (c) => c.primaryKey())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("is_primary", "boolean", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await projection("orgs")
    .addColumn("name", "text", (c) => c.notNull())
    .execute();

  await projection("users")
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addUniqueConstraint("users_username", ["instance_id", "username"])
    .execute();

  await db.schema
    .createTable("personal_access_tokens")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("personal_access_tokens_pkey", ["instance_id", "id"])
    .execute();

  await db.schema
    .createTable("memberships")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("context_type", "text", (c) => c.notNull())
    .addColumn("context_id", "text", (c) => c.notNull())
    .addColumn("roles", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("memberships_pkey", ["instance_id", "user_id", "context_type", "context_id"])
    .execute();

  await db.schema
    .createTable("instance_features")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("enabled", "boolean", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("instance_features_pkey", ["instance_id", "name"])
    .execute();

  await projection("targets")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("target_type", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("timeout_ms", "integer", (c) => c.notNull())
    .addColumn("execution_mode", "text", (c) => c.notNull())
    .addColumn("signing_key", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("targets_instance_name").on("targets").columns(["instance_id", "name"]).unique().execute();
  await db.schema.createIndex("targets_instance_created").on("targets").columns(["instance_id", "created_at", "id"]).execute();

  await projection("executions")
    .addColumn("condition_type", "text", (c) => c.notNull())
    .addColumn("targets", "jsonb", (c) => c.notNull())
    .addColumn("includes", "jsonb", (c) => c.notNull())
    .execute();
  await sql`create index executions_targets on executions using gin (targets jsonb_path_ops)`.execute(db);
  await sql`create index executions_includes on executions using gin (includes jsonb_path_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "executions",
    "targets",
    "instance_features",
    "memberships",
    "personal_access_tokens",
    "users",
    "orgs",
    "instance_domains",
    "instances",
    "events",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
