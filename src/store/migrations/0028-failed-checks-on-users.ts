import { sql, type Kysely } from "kysely";

/**
 * The count of failed checks moves from the password row to the user (domain/user/lockout.ts):
 * people without a password (created by an external login, invited, passkey-only) had no row
 * to count on, so wrong codes never locked them. The counts so far come along.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column failed_checks integer not null default 0`.execute(db);
  await sql`
    update users u set failed_checks = s.failed_attempts
    from user_secrets s
    where s.instance_id = u.instance_id and s.user_id = u.id and s.kind = 'password' and s.failed_attempts > 0`.execute(db);
  await sql`alter table user_secrets drop column failed_attempts`.execute(db);
}
