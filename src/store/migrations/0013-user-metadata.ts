import type { Kysely } from "kysely";

/** Key/value bytes per user (PlatformUsers metadata; read and set by action functions). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("user_metadata")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("value", "bytea", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_metadata_pkey", ["instance_id", "user_id", "key"])
    .execute();
}
