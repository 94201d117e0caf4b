import { sql, type Kysely } from "kysely";
import { instanceSequence } from "../instance-sequence.js";

/**
 * Events get a position within their instance, from a sequence per instance, so that
 * ListDetails.processed_sequence tells a tenant about its own writes only (the global
 * position counts everyone's). Existing events are numbered in their global order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events add column instance_position bigint`.execute(db);
  await sql`update events e set instance_position = n.rn
    from (select position, row_number() over (partition by instance_id order by position) as rn from events) n
    where e.position = n.position`.execute(db);
  const { rows } = await sql<{ instance_id: string; last: number }>`
    select instance_id, max(instance_position) as last from events group by instance_id`.execute(db);
  for (const { instance_id, last } of rows) {
    const name = instanceSequence(instance_id);
    await sql`create sequence ${sql.id(name)}`.execute(db);
    await sql`select setval(${name}::regclass, ${Number(last)})`.execute(db);
  }
  await sql`alter table events alter column instance_position set not null`.execute(db);
}
