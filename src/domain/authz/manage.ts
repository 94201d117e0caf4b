import type { Tx } from "../../store/db.js";
import { permissionDenied } from "../errors.js";
import { mayGrant, scopeOf, type Principal } from "./principal.js";
import { isRoleName } from "./roles.js";

/**
 * Acting on users (their profile, state, credentials, existence, or their organization's
 * state) needs the right to grant every role they hold, wherever they hold it: whoever could
 * set a SYSTEM_OWNER's password or mint its token would hold its power. Users acting on
 * themselves are not asked. Call it after locking the users (userRowForUpdate, orgRowForUpdate): a role
 * granted meanwhile then waits for this transaction.
 */
export async function assertMayManageUsers(tx: Tx, instanceId: string, actor: Principal, users: { userId: string } | { orgId: string }): Promise<void> {
  let query = tx
    .selectFrom("memberships as m")
    .innerJoin("users as u", (j) => j.onRef("u.instance_id", "=", "m.instance_id").onRef("u.id", "=", "m.user_id"))
    // A project grant's memberships hold inside the organization it was given to.
    .leftJoin("project_grants as pg", (j) =>
      j.onRef("pg.instance_id", "=", "m.instance_id").onRef("pg.id", "=", "m.context_id").on("m.context_type", "=", "project_grant"),
    )
    .select(["m.user_id", "m.context_type", "m.context_id", "m.roles", "pg.granted_org_id"])
    .where("u.instance_id", "=", instanceId);
  query = "userId" in users ? query.where("u.id", "=", users.userId) : query.where("u.org_id", "=", users.orgId);
  for (const membership of await query.execute()) {
    if (membership.user_id === actor.userId && actor.instanceId === instanceId) continue;
    const scope = scopeOf(membership.context_type, membership.context_id, instanceId, membership.granted_org_id ?? undefined);
    for (const role of membership.roles) {
      if (isRoleName(role) && !mayGrant(actor, role, scope)) {
        throw permissionDenied(`user ${membership.user_id} holds ${role}, which you cannot grant: acting on it needs that much power`);
      }
    }
  }
}
