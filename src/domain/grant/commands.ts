import { sql } from "kysely";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, notFound } from "../errors.js";
import { requireExisting } from "../existence.js";
import { normalizedRoleKeys, projectRowForUpdate, requireProjectRoles } from "../project/rows.js";
import type { ProjectGrantRow } from "../project-grant/model.js";
import { projectGrantForShare } from "../project-grant/rows.js";
import { AGGREGATE, grantDetails, type UserGrantRow } from "./model.js";

/** Keys a project grant does not give among `keys`: FailedPrecondition naming them. */
function requireGranted(grant: ProjectGrantRow, keys: readonly string[]): void {
  const given = new Set(grant.role_keys);
  const missing = keys.filter((k) => !given.has(k));
  if (missing.length > 0) {
    throw failedPrecondition(
      `project grant ${grant.id} gives organization ${grant.granted_org_id} no role ${missing.map((k) => `"${k}"`).join(", ")}; only ${
        grant.role_keys.length > 0 ? grant.role_keys.map((k) => `"${k}"`).join(", ") : "none"
      }`,
    );
  }
}

/**
 * Gives a user of the instance roles of a project; the grant belongs to the project's
 * organization. Made by an organization the project is granted to (`byOrg`, which the
 * request acts for), it gives one of that organization's own users roles of its active
 * project grant, and belongs to that organization. The project, the project grant and the
 * user are share-locked: a concurrent removal of any of them, or of one of the roles, waits
 * and then takes this grant into account.
 */
export async function addUserGrant(
  tx: Tx,
  actor: Actor,
  projectId: string,
  input: { userId: string; roleKeys: string[] },
  byOrg?: string,
): Promise<ObjectDetails> {
  const project = await projectRowForUpdate(tx, actor.instanceId, projectId, "share");
  const projectGrant =
    byOrg !== undefined && byOrg !== project.org_id ? await projectGrantForShare(tx, actor.instanceId, { projectId, grantedOrgId: byOrg }) : undefined;
  if (projectGrant && projectGrant.state !== "active") throw failedPrecondition(`project grant ${projectGrant.id} is deactivated; reactivate it first`);
  const userOrg = await requireExisting(tx, "users", actor.instanceId, input.userId);
  // Another organization's users are not the granted organization's to see: as if absent.
  if (projectGrant && userOrg !== projectGrant.granted_org_id) throw notFound(`user ${input.userId} not found in organization ${projectGrant.granted_org_id}`);
  const roleKeys = normalizedRoleKeys(input.roleKeys);
  await requireProjectRoles(tx, actor.instanceId, projectId, roleKeys);
  if (projectGrant) requireGranted(projectGrant, roleKeys);
  const orgId = projectGrant ? projectGrant.granted_org_id : project.org_id;
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId },
    0,
    [{ type: "user.grant.added", payload: { projectId, userId: input.userId, roleKeys, ...(projectGrant && { projectGrantId: projectGrant.id }) } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: orgId,
    project_id: projectId,
    user_id: input.userId,
    role_keys: JSON.stringify(roleKeys),
    project_grant_id: projectGrant?.id ?? "",
    ...createdBy(appended),
  };
  await tx.insertInto("user_grants").values(row).execute();
  return grantDetails(row);
}

async function grantRowForUpdate(tx: Tx, instanceId: string, id: string): Promise<UserGrantRow> {
  const row = await tx.selectFrom("user_grants").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`user grant ${id} not found`);
  return row;
}

/** Replaces the role keys; the same set again changes nothing. */
export async function patchUserGrant(tx: Tx, actor: Actor, id: string, roleKeys: string[]): Promise<ObjectDetails> {
  // The project before the grant, in the order removals of roles and projects lock them
  // (project, then its grants): the opposite order deadlocks with them. A grant's project
  // never changes, so reading it unlocked first is safe.
  const seen = await tx
    .selectFrom("user_grants")
    .select(["project_id", "project_grant_id"])
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!seen) throw notFound(`user grant ${id} not found`);
  const project = await tx
    .selectFrom("projects")
    .select("id")
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", seen.project_id)
    .forShare()
    .executeTakeFirst();
  if (!project) throw notFound(`user grant ${id} not found`);
  // Then its project grant, in the order a change of the project grant locks them.
  const projectGrant = seen.project_grant_id ? await projectGrantForShare(tx, actor.instanceId, { id: seen.project_grant_id }) : undefined;
  const current = await grantRowForUpdate(tx, actor.instanceId, id);
  const keys = normalizedRoleKeys(roleKeys);
  if (JSON.stringify(keys) === JSON.stringify(normalizedRoleKeys(current.role_keys))) return grantDetails(current);
  await requireProjectRoles(tx, actor.instanceId, current.project_id, keys);
  if (projectGrant) requireGranted(projectGrant, keys);
  return changeGrant(tx, actor, current, "user.grant.changed", keys);
}

async function changeGrant(tx: Tx, actor: Actor, current: UserGrantRow, type: string, roleKeys: string[]): Promise<ObjectDetails> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.org_id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, [{ type, payload: { roleKeys } }], actor, {
    table: "user_grants",
    key: { instance_id: actor.instanceId, id: current.id },
    set: { role_keys: JSON.stringify(roleKeys) },
  });
  return grantDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

export async function removeUserGrant(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await grantRowForUpdate(tx, actor.instanceId, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.org_id },
    current.sequence,
    [{ type: "user.grant.removed", payload: {} }],
    actor,
  );
  await tx.deleteFrom("user_grants").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return grantDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Part of removing roles from a project (the project is locked for update) or from a project
 * grant (the grant is): every user grant there that gives one loses it, each with an event of
 * its own, so that a grant's sequence counts every change.
 */
export async function cascadeRolesRemoval(
  tx: Tx,
  actor: Actor,
  under: { projectId: string } | { projectGrantId: string },
  keys: readonly string[],
): Promise<void> {
  if (keys.length === 0) return;
  const gone = new Set(keys);
  let query = tx.selectFrom("user_grants").selectAll().where("instance_id", "=", actor.instanceId);
  query = "projectId" in under ? query.where("project_id", "=", under.projectId) : query.where("project_grant_id", "=", under.projectGrantId);
  const affected = await query
    .where((eb) => eb.or(keys.map((key) => sql<boolean>`role_keys @> ${JSON.stringify([key])}::jsonb`)))
    .forUpdate()
    .execute();
  for (const grant of affected) {
    await changeGrant(
      tx,
      actor,
      grant,
      "user.grant.cascade.changed",
      grant.role_keys.filter((k) => !gone.has(k)),
    );
  }
}
