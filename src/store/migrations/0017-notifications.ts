import { sql, type Kysely } from "kysely";

/**
 * Messages to users (verification codes, password resets, invitations) and the codes they
 * carry. A message is written in the transaction of the change that asks for it, so a
 * committed change never lacks its message and a rolled back one never sends any; workers
 * of every process claim due rows (notifications/outbox/). What the message says (its code)
 * is sealed with the master key while it waits, and wiped once it is sent or can no longer
 * be: the log keeps recipient, kind, language, status, attempts and the last error.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("notifications")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull().check(sql`channel in ('email', 'sms')`))
    .addColumn("recipient", "text", (c) => c.notNull())
    // Decided when it is rendered: the user's language may change while it waits.
    .addColumn("language", "text")
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'sent', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
    .addColumn("claimed_until", "timestamptz")
    .addColumn("claim_id", "text")
    .addColumn("last_error", "text")
    .addColumn("sealed_data", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    // Past it a message is not sent any more (a code in it would be stale).
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("sent_at", "timestamptz")
    .addPrimaryKeyConstraint("notifications_pkey", ["instance_id", "id"])
    .execute();
  await db.schema.createIndex("notifications_due").on("notifications").column("next_attempt_at").where(sql.ref("status"), "=", "pending").execute();
  await db.schema.createIndex("notifications_log").on("notifications").columns(["instance_id", "created_at"]).execute();

  // One live code per user and purpose (a new one replaces the old), keyed-hashed.
  await db.schema
    .createTable("user_codes")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("purpose", "text", (c) => c.notNull())
    .addColumn("code_hash", "text", (c) => c.notNull())
    // What the code proves: the address or number it was sent to (a change voids it).
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_codes_pkey", ["instance_id", "user_id", "purpose"])
    .execute();
}
