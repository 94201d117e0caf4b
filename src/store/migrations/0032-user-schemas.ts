import { sql, type Kysely } from "kysely";

/**
 * User schemas: kinds of user beside people and service accounts, each a JSON Schema its
 * users' data must meet. `type` is unique in the instance regardless of case; `revision`
 * counts the changes of the JSON Schema (users remember the one they were last validated
 * against).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("user_schemas")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().defaultTo("active"))
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("schema", "jsonb", (c) => c.notNull())
    .addColumn("possible_authenticators", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_schemas_pkey", ["instance_id", "id"])
    .execute();
  await sql`create unique index user_schemas_type on user_schemas (instance_id, lower(type))`.execute(db);
  // A user of a schema: its type is 'schema', and it keeps the schema, the revision its data
  // was last validated against, and the data.
  await db.schema.alterTable("users").addColumn("schema_id", "text").addColumn("schema_revision", "integer").addColumn("data", "jsonb").execute();
  await db.schema.createIndex("users_schema").on("users").columns(["instance_id", "schema_id"]).where(sql.ref("schema_id"), "is not", null).execute();
}
