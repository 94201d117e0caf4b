import { sql, type Kysely } from "kysely";

/**
 * Second factors of a user. One row per kind (a user has at most one TOTP, one email and one
 * SMS one-time-code factor): the TOTP secret sealed with the instance's key, and the last
 * time step a code was accepted for, so that a code is taken once. A TOTP is `pending` until
 * a first code proves the authenticator has it. Recovery codes: one row per code, keyed-hashed
 * like the other short codes (domain/notification/codes.ts), marked when used. `mfa_init_skipped_at`:
 * when the person last skipped setting up a second factor that the login settings ask for.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("user_factors")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('totp', 'otp_email', 'otp_sms')`))
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('pending', 'ready')`))
    .addColumn("sealed_secret", "text")
    .addColumn("last_step", "bigint")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_factors_pkey", ["instance_id", "user_id", "type"])
    .execute();
  await db.schema
    .createTable("user_recovery_codes")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .addPrimaryKeyConstraint("user_recovery_codes_pkey", ["instance_id", "user_id", "code_hash"])
    .execute();
  await sql`alter table users add column mfa_init_skipped_at timestamptz`.execute(db);
}
