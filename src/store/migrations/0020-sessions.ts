import { sql, type Kysely } from "kysely";

/**
 * Sessions of the session API (PlatformSessions): the SHA-256 of the current token (random,
 * like a personal access token), the user once checked, when each factor was checked
 * (`factors`, by name), the caller's metadata (base64 values) and the user agent. Removed
 * with their user or instance.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sessions")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull())
    .addColumn("user_id", "text")
    .addColumn("factors", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("metadata", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("user_agent", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("expires_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("sessions_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("sessions_user").on("sessions").columns(["instance_id", "user_id"]).execute();
  await db.schema.createIndex("sessions_created").on("sessions").columns(["instance_id", "created_at"]).execute();
}
