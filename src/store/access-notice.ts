import { sql } from "kysely";
import { ACCESS_CHANNEL } from "../cache/access-epoch.js";
import type { Tx } from "./db.js";

/** Tells every process that who may do what changed (cache/access-epoch.ts): delivered when `tx` commits, and not at all when it rolls back. */
export async function noticeAccessChange(tx: Tx): Promise<void> {
  await sql`select pg_notify(${ACCESS_CHANNEL}, '')`.execute(tx);
}
