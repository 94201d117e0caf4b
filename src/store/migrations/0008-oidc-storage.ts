import type { Kysely } from "kysely";

/**
 * What the OpenID Connect provider keeps. `signing_keys`: the keys an instance signs tokens with. A key is published (in the JWKS) from its
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

  // oidc_payloads: every model node-oidc-provider stores (sessions, interactions, grants, codes,
  // tokens, replay detection), so that any process can continue any flow. Expired rows are
  // swept; until then reads ignore them.
  await db.schema
    .createTable("oidc_payloads")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("grant_id", "text")
    .addColumn("uid", "text")
    .addColumn("user_code", "text")
    .addColumn("expires_at", "timestamptz")
    .addColumn("consumed_at", "timestamptz")
    .addPrimaryKeyConstraint("oidc_payloads_pkey", ["instance_id", "model", "id"])
    .execute();
  await db.schema.createIndex("oidc_payloads_grant").on("oidc_payloads").columns(["instance_id", "grant_id"]).execute();
  await db.schema.createIndex("oidc_payloads_uid").on("oidc_payloads").columns(["instance_id", "model", "uid"]).execute();
  await db.schema.createIndex("oidc_payloads_user_code").on("oidc_payloads").columns(["instance_id", "model", "user_code"]).execute();
  await db.schema.createIndex("oidc_payloads_expiry").on("oidc_payloads").column("expires_at").execute();
}
