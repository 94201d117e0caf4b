import { sql, type Kysely } from "kysely";

/** Instances get a default language, a password policy (null: the default one), and limits. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table instances
    add column default_language text not null default 'en',
    add column password_policy jsonb,
    add column blocked boolean not null default false,
    add column audit_log_retention_ms bigint`.execute(db);
  await db.schema.createIndex("instance_domains_instance").on("instance_domains").columns(["instance_id"]).execute();
}
