import { sql, type Kysely } from "kysely";

/**
 * The instance hold (0025) fails by itself when the instance is gone, instead of answering
 * false: a write no longer waits for the hold's answer before its first statement
 * (store/deferred.ts), so the server must refuse what follows it. Its SQLSTATE, P0404, is
 * ours (PL/pgSQL's class P0 uses P0001 to P0004); domain/instance/commands.ts turns it into
 * NotFound.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function hold_instance(instance text) returns boolean language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock_shared(hashtext('instance:' || instance));
      if not exists (select 1 from instances where instance_id = instance and id = instance) then
        raise exception 'instance % not found', instance using errcode = 'P0404';
      end if;
      return true;
    end $$`.execute(db);
}
