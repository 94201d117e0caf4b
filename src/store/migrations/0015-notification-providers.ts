import { sql, type Kysely } from "kysely";

/**
 * The instances' SMTP and SMS providers, both families in one table (they share every rule
 * but their settings). `config` holds the kind's settings without secrets; the password or
 * token and an `http` provider's signing key are sealed with the master key. The partial
 * unique index keeps at most one provider of each family active per instance, whatever
 * races past the activation's locks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("notification_providers")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("family", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("config", "jsonb", (c) => c.notNull())
    .addColumn("secret", "text")
    .addColumn("signing_key", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("notification_providers_pkey", ["instance_id", "id"])
    .execute();
  await sql`create unique index notification_providers_active on notification_providers (instance_id, family) where state = 'active'`.execute(db);
  await db.schema.createIndex("notification_providers_created").on("notification_providers").columns(["instance_id", "family", "created_at", "id"]).execute();
}
