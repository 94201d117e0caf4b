import type { Kysely } from "kysely";

/**
 * Links between users and their accounts at identity providers (external login): one row per
 * external account of a provider in an instance, and a user has at most one account per
 * provider. Removed with the user, the provider, the organization and the instance.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("external_identities")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("idp_id", "text", (c) => c.notNull())
    .addColumn("external_user_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("external_username", "text", (c) => c.notNull())
    .addColumn("external_email", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("external_identities_pkey", ["instance_id", "idp_id", "external_user_id"])
    .execute();
  await db.schema.createIndex("external_identities_user").on("external_identities").columns(["instance_id", "user_id", "idp_id"]).unique().execute();
  // A system provider's removal deletes its links in every instance.
  await db.schema.createIndex("external_identities_idp").on("external_identities").column("idp_id").execute();
}
