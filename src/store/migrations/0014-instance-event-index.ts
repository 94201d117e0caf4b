import { sql, type Kysely } from "kysely";

/**
 * The newest instance event of the whole system, for SearchInstances' processed sequence
 * (instances are a system-level projection: creations and removals happen in other
 * instances than the caller's). Partial: only instance events pay for it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index events_instance_events_position on events (position) where aggregate_type = 'instance'`.execute(db);
}
