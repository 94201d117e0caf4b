import { sql, type Kysely } from "kysely";

/**
 * WebAuthn credentials of users: passkeys (discoverable, user-verified: a sign-in by
 * themselves) and security keys (a second factor). A registration is `pending` with its
 * challenge until the authenticator's answer is verified; then the credential's id, public
 * key (COSE), signature counter and transports are kept, and the challenge goes. A session's
 * pending WebAuthn challenge lives on the session (`challenges`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("user_webauthn_keys")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('passkey', 'u2f')`))
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('pending', 'ready')`))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("rp_id", "text", (c) => c.notNull())
    .addColumn("challenge", "text")
    .addColumn("user_verification", "text", (c) => c.notNull())
    .addColumn("credential_id", "text")
    .addColumn("public_key", "text")
    .addColumn("sign_count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("transports", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("device_type", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_webauthn_keys_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("user_webauthn_keys_user").on("user_webauthn_keys").columns(["instance_id", "user_id"]).execute();
  await sql`create unique index user_webauthn_keys_credential on user_webauthn_keys (instance_id, credential_id) where credential_id is not null`.execute(db);
  await sql`alter table sessions add column challenges jsonb not null default '{}'::jsonb`.execute(db);
}
