import { sql, type Kysely } from "kysely";

/**
 * Users become people or service accounts with a state; their secrets (password and client
 * secret hashes) live in a table of their own that no read of users ever selects, and keys
 * in another. Usernames are unique per instance regardless of case.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users
    add column state text not null default 'active',
    add column given_name text,
    add column family_name text,
    add column nick_name text,
    add column preferred_language text,
    add column gender text,
    add column email text,
    add column email_verified boolean,
    add column phone text,
    add column phone_verified boolean,
    add column description text,
    add column access_token_type text`.execute(db);
  await sql`alter table users drop constraint users_username`.execute(db);
  await sql`create unique index users_instance_username on users (instance_id, lower(username))`.execute(db);
  await db.schema.createIndex("users_org").on("users").columns(["instance_id", "org_id"]).execute();
  await db.schema.createIndex("personal_access_tokens_user").on("personal_access_tokens").columns(["instance_id", "user_id"]).execute();

  await db.schema
    .createTable("user_secrets")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("change_required", "boolean", (c) => c.notNull())
    .addColumn("changed_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_secrets_pkey", ["instance_id", "user_id", "kind"])
    .execute();

  await db.schema
    .createTable("user_keys")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("key_type", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_keys_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("user_keys_user").on("user_keys").columns(["instance_id", "user_id"]).execute();
}
