import type { Kysely } from "kysely";

/**
 * Failed password checks since the last success, per user (on the password row): the login
 * pages lock a user after too many (PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("user_secrets")
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
