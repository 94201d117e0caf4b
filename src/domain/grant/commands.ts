import { sql } from "kysely";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, notFound } from "../errors.js";
import { requireExisting } from "../existence.js";
import { projectRowForUpdate, unknownRoleKeys } from "../project/rows.js";
import { AGGREGATE, grantDetails, type UserGrantRow } from "./model.js";

/** Role keys are kept sorted and once each: equal sets compare equal. */
const normalized = (keys: readonly string[]) => [...new Set(keys)].sort();

async function requireRoles(tx: Tx, instanceId: string, projectId: string, keys: readonly string[]): Promise<void> {
  const unknown = await unknownRoleKeys(tx, instanceId, projectId, keys);
  if (unknown.length > 0) throw failedPrecondition(`project ${projectId} has no role ${unknown.map((k) => `"${k}"`).join(", ")}; add it to the project first`);
}

/**
 * Gives a user of the instance roles of a project; the grant belongs to the project's
 * organization. The project and the user are share-locked: a concurrent removal of either,
 * or of one of the roles, waits and then takes this grant into account.
 */
export async function addUserGrant(tx: Tx, actor: Actor, projectId: string, input: { userId: string; roleKeys: string[] }): Promise<ObjectDetails> {
  const project = await projectRowForUpdate(tx, actor.instanceId, projectId, "share");
  await requireExisting(tx, "users", actor.instanceId, input.userId);
  const roleKeys = normalized(input.roleKeys);
  await requireRoles(tx, actor.instanceId, projectId, roleKeys);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: project.org_id },
    0,
    [{ type: "user.grant.added", payload: { projectId, userId: input.userId, roleKeys } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: project.org_id,
    project_id: projectId,
    user_id: input.userId,
    role_keys: JSON.stringify(roleKeys),
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
  const seen = await tx.selectFrom("user_grants").select("project_id").where("instance_id", "=", actor.instanceId).where("id", "=", id).executeTakeFirst();
  if (!seen) throw notFound(`user grant ${id} not found`);
  const project = await tx
    .selectFrom("projects")
    .select("id")
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", seen.project_id)
    .forShare()
    .executeTakeFirst();
  if (!project) throw notFound(`user grant ${id} not found`);
  const current = await grantRowForUpdate(tx, actor.instanceId, id);
  const keys = normalized(roleKeys);
  if (JSON.stringify(keys) === JSON.stringify(normalized(current.role_keys))) return grantDetails(current);
  await requireRoles(tx, actor.instanceId, current.project_id, keys);
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
 * Part of removing a role (the project is locked for update): every grant that gives it
 * loses it, each with an event of its own, so that a grant's sequence counts every change.
 */
export async function cascadeRoleRemoval(tx: Tx, actor: Actor, projectId: string, key: string): Promise<void> {
  const affected = await tx
    .selectFrom("user_grants")
    .selectAll()
    .where("instance_id", "=", actor.instanceId)
    .where("project_id", "=", projectId)
    .where(sql<boolean>`role_keys @> ${JSON.stringify([key])}::jsonb`)
    .forUpdate()
    .execute();
  for (const grant of affected) {
    await changeGrant(
      tx,
      actor,
      grant,
      "user.grant.cascade.changed",
      grant.role_keys.filter((k) => k !== key),
    );
  }
}
