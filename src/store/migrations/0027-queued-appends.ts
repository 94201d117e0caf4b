import { sql, type Kysely } from "kysely";

/**
 * The refusal of a queued append (store/append.ts: queueEvents): a write that sends its
 * events with its commit, without reading the insert's answer, cannot let the append hooks
 * (the action engine's outbox) run, so the insert's statement calls this when a hook would
 * have work, and the transaction fails instead of committing events without their
 * deliveries. Its SQLSTATE, P0100, is ours (as P0404 is, 0026); the detail names the
 * instance, whose writes then wait for their inserts' answers (appendRefused).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function refuse_queued_append(instance text) returns boolean language plpgsql volatile as $$
    begin
      raise exception 'the append hooks of instance % have work: its events cannot be queued', instance using errcode = 'P0100', detail = instance;
    end $$`.execute(db);
}
