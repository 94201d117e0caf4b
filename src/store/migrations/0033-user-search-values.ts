import { sql, type Kysely } from "kysely";

/**
 * The values of schema users' searchable fields (`"urn:platform:searchable": true`), one row
 * per field and user, as text: SearchUsers' `data` filter reads this index rather than every
 * user's JSON. Rewritten with the user's data in the same transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("user_search_values")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("field", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_search_values_pkey", ["instance_id", "user_id", "field"])
    .execute();
  await sql`create index user_search_values_by_value on user_search_values (instance_id, field, value)`.execute(db);
}
