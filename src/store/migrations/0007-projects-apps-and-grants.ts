import { sql, type Kysely } from "kysely";

/**
 * Projects of organizations with their roles and applications, and user grants: roles of a
 * project given to a user of the instance. Grants and applications belong to the project's
 * organization. An application's configuration is JSON (what the OpenID Connect provider
 * reads); its client secret is kept as a SHA-256 hash (it is random, as tokens are).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("projects")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("role_assertion", "boolean", (c) => c.notNull())
    .addColumn("role_check", "boolean", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().defaultTo("active"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("projects_pkey", ["instance_id", "id"])
    .execute();
  await sql`create unique index projects_name on projects (instance_id, org_id, lower(name))`.execute(db);

  await db.schema
    .createTable("project_roles")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("display_name", "text", (c) => c.notNull())
    .addColumn("group_name", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("project_roles_pkey", ["instance_id", "project_id", "key"])
    .execute();

  await db.schema
    .createTable("user_grants")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("role_keys", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_grants_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("user_grants_user_project").unique().on("user_grants").columns(["instance_id", "user_id", "project_id"]).execute();
  await db.schema.createIndex("user_grants_project").on("user_grants").columns(["instance_id", "project_id"]).execute();

  await db.schema
    .createTable("apps")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("config", "jsonb", (c) => c.notNull())
    .addColumn("client_id", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text")
    .addColumn("state", "text", (c) => c.notNull().defaultTo("active"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("apps_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("apps_client_id").unique().on("apps").columns(["instance_id", "client_id"]).execute();
  await sql`create unique index apps_name on apps (instance_id, project_id, lower(name))`.execute(db);

  // Public keys of applications that authenticate with private_key_jwt.
  await db.schema
    .createTable("app_keys")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("app_id", "text", (c) => c.notNull())
    .addColumn("key_type", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("app_keys_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("app_keys_app").on("app_keys").columns(["instance_id", "app_id"]).execute();
}
