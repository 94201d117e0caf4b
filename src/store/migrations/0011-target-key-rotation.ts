import type { Kysely } from "kysely";

/**
 * A target's previous signing key and when it was replaced: for a grace period after a
 * regeneration the calls carry a signature by each, so receivers can switch keys without
 * refusing calls in between (PLATFORM_ACTIONS_SIGNING_KEY_GRACE).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("targets").addColumn("previous_signing_key", "text").addColumn("signing_key_changed_at", "timestamptz").execute();
}
