import type { Kysely } from "kysely";

/**
 * Project grants: roles of a project its organization gives another organization of the
 * instance. One per project and granted organization. User grants remember the project grant
 * they were made under ('' for the project organization's own), so that a grant's
 * deactivation, a role it loses and its removal reach them; memberships gain the
 * `project_grant` context (PROJECT_GRANT_OWNER), whose context id is the grant's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("project_grants")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("granted_org_id", "text", (c) => c.notNull())
    .addColumn("role_keys", "jsonb", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().defaultTo("active"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("change_date", "timestamptz", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("project_grants_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("project_grants_project_org").unique().on("project_grants").columns(["instance_id", "project_id", "granted_org_id"]).execute();
  await db.schema.createIndex("project_grants_granted_org").on("project_grants").columns(["instance_id", "granted_org_id"]).execute();
  await db.schema
    .alterTable("user_grants")
    .addColumn("project_grant_id", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.createIndex("user_grants_project_grant").on("user_grants").columns(["instance_id", "project_grant_id"]).execute();
}
