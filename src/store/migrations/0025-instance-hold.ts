import { sql, type Kysely } from "kysely";

/**
 * How a write holds its instance against a concurrent DeleteInstance (domain/instance/
 * commands.ts: holdInstance, removeInstance): a shared advisory lock on the instance, then
 * whether it still exists, read after the lock was granted. Until now every write took a key
 * share lock on the instance's row: with writes overlapping, each one wrote a new MultiXact
 * into that one tuple (and the WAL), and PostgreSQL ran such transactions at half the rate
 * of the same ones without the lock (pgbench, 20 clients); an advisory lock lives in the
 * lock manager's memory only.
 *
 * A function, so that the existence check is a statement of its own: under read committed
 * each statement of a volatile function sees what committed before it began, so a removal
 * that committed while the write waited for the lock is seen. (Writes run read committed.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function hold_instance(instance text) returns boolean language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock_shared(hashtext('instance:' || instance));
      return exists (select 1 from instances where instance_id = instance and id = instance);
    end $$`.execute(db);
  // The removal's side: waits for every write holding the instance and holds off new ones.
  await sql`
    create function hold_instance_exclusively(instance text) returns void language sql volatile as $$
      select pg_advisory_xact_lock(hashtext('instance:' || instance))
    $$`.execute(db);
}
