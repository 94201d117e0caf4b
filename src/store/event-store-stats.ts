import { sql } from "kysely";
import type { Db } from "./db.js";

/** What a metrics scrape reads of the event store: how far it has come, and how long its oldest open write has run. */
export interface EventStoreStats {
  position: number;
  oldestWriteSeconds: number;
}

export async function readEventStoreStats(db: Db): Promise<EventStoreStats> {
  const newest = await db
    .selectFrom("events")
    .select((eb) => eb.fn.max("position").as("position"))
    .executeTakeFirst();
  // A writing transaction has an xid; our own (this read) has none.
  const oldest = await db
    .withTables<{ pg_stat_activity: { xact_start: Date | null; backend_xid: string | null; datname: string } }>()
    .selectFrom("pg_stat_activity")
    .select(sql<number | null>`extract(epoch from clock_timestamp() - min(xact_start))`.as("seconds"))
    .where("datname", "=", sql<string>`current_database()`)
    .where("backend_xid", "is not", null)
    .executeTakeFirst();
  return { position: Number(newest?.position ?? 0), oldestWriteSeconds: Math.max(0, Number(oldest?.seconds ?? 0)) };
}
