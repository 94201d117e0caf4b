import { sql, type Kysely } from "kysely";

/**
 * `passkey_prompt_skipped_at`: when the person last answered "Not now" to the login pages'
 * offer of a passkey after a password sign-in; the offer waits `mfa_init_skip_lifetime`
 * after it (src/oidc/login/passkey-offer.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column passkey_prompt_skipped_at timestamptz`.execute(db);
}
