import type { Kysely } from "kysely";

/**
 * Files that belong to a kind of settings in a context, as its rows in `settings` do: the
 * branding's logos and icons. The settings row holds where each is served (its URL, with
 * the content's hash), this table its bytes; both go with their organization or instance.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("settings_files")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("data", "bytea", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("settings_files_pkey", ["instance_id", "org_id", "kind", "name"])
    .execute();
}
