import type { Db } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";
import { grantsFrom, type Principal } from "../authz/principal.js";
import { userSchemaAllowsSql } from "../user-schema/users.js";

/** The caller behind a personal access token (by its hash), or undefined when unknown, expired or not allowed in. */
export async function principalByTokenHash(db: Db, tokenHash: string): Promise<{ principal: Principal; expires: number } | undefined> {
  const row = await db
    .selectFrom("personal_access_tokens as t")
    .innerJoin("users as u", (j) => j.onRef("u.instance_id", "=", "t.instance_id").onRef("u.id", "=", "t.user_id"))
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .select(["t.id", "t.instance_id", "t.user_id", "t.expires_at", "u.org_id"])
    .where("t.token_hash", "=", tokenHash)
    // Locked or deactivated users, and users of a deactivated organization, cannot authenticate.
    .where("u.state", "=", "active")
    .where("o.state", "=", "active")
    // A schema user's tokens work while its schema allows tokens: dropping PAT from the schema
    // stops the ones made before (PatchUserSchema advances the access epoch, so no cache keeps them).
    .where((eb) => eb.or([eb("u.type", "!=", "schema"), userSchemaAllowsSql("pat")]))
    .executeTakeFirst();
  if (!row || row.expires_at.getTime() <= Date.now()) return undefined;
  return { principal: { ...(await principalOf(db, row.instance_id, row.user_id, row.org_id)), client: `pat:${row.id}` }, expires: row.expires_at.getTime() };
}

/** A user with the permissions of its memberships, wherever they are. */
export async function principalOf(db: Db, instanceId: string, userId: string, orgId: string): Promise<Principal> {
  const memberships = await db
    .selectFrom("memberships")
    .select(["context_type", "context_id", "roles"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .execute();
  return { userId, instanceId, orgId, grants: grantsFrom(memberships) };
}

/** A user's tokens, newest first unless asked otherwise; never the token or its hash. */
export async function searchPersonalAccessTokens(db: Db, instanceId: string, user: { id: string; orgId: string }, page: Page) {
  const query = db.selectFrom("personal_access_tokens").where("instance_id", "=", instanceId).where("user_id", "=", user.id);
  const found = await searchPage(db, "pat", instanceId, query, (q, direction) => q.orderBy("created_at", direction).orderBy("id", direction), page);
  return {
    ...found,
    rows: found.rows.map((row) => ({
      // A token is never changed: its one event is its creation.
      details: { id: row.id, sequence: 1, changeDate: row.created_at, owner: { type: "org" as const, id: user.orgId } },
      expiresAt: row.expires_at,
    })),
  };
}
