import type { Kysely } from "kysely";

/**
 * The keys an instance signs tokens with. A key is published (in the JWKS) from its
 * creation, signs from `activates_at` until its successor activates (`retires_at`), and stays
 * published until every token it signed has expired. The private part is sealed with the
 * master key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("signing_keys")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("algorithm", "text", (c) => c.notNull())
    .addColumn("public_jwk", "jsonb", (c) => c.notNull())
    .addColumn("private_jwk", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("activates_at", "timestamptz", (c) => c.notNull())
    .addColumn("retires_at", "timestamptz")
    .addPrimaryKeyConstraint("signing_keys_pkey", ["instance_id", "id"])
    .execute();
}
