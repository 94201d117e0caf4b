import { type Kysely } from "kysely";

/**
 * External logins started through the API (PlatformIDPIntents): the provider and the
 * organization it was found active in, where the browser goes afterwards, the state
 * (`started`, `succeeded`, `failed`, `consumed`), the SHA-256 of the token the success URL
 * received (random, like a session token), what the provider said of the person, and when
 * the intent stops being usable. Expired rows are swept; they go with their instance.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("idp_intents")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("idp_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("success_url", "text", (c) => c.notNull())
    .addColumn("failure_url", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("token_hash", "text")
    .addColumn("external_user_id", "text")
    .addColumn("identity", "jsonb")
    .addColumn("raw_information", "jsonb")
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("idp_intents_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("idp_intents_expiry").on("idp_intents").column("expires_at").execute();
}
