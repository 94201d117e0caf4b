import { sql, type Kysely } from "kysely";

/**
 * `console_client_id`: the OpenID Connect application the administration console signs in
 * with (console/, served at /ui/console/), one per instance, provisioned with the instance
 * (domain/instance/console-client.ts). Null until provisioned.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table instances add column console_client_id text`.execute(db);
}
