import { sql } from "kysely";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from "../errors.js";
import { requireActiveOrg } from "../existence.js";
import { cascadeRolesRemoval } from "../grant/commands.js";
import { normalizedRoleKeys, projectRowForUpdate, requireProjectRoles } from "../project/rows.js";
import { AGGREGATE, projectGrantDetails, type ProjectGrantRow, type ProjectGrantState } from "./model.js";

/**
 * The project's organization gives another organization of the instance roles of the
 * project. The project is share-locked (a removal of it or of a role waits, then takes this
 * grant into account), and so is the granted organization, which must be active.
 */
export async function addProjectGrant(tx: Tx, actor: Actor, projectId: string, input: { grantedOrgId: string; roleKeys: string[] }): Promise<ObjectDetails> {
  const project = await projectRowForUpdate(tx, actor.instanceId, projectId, "share");
  if (input.grantedOrgId === project.org_id) {
    throw invalidArgument(`organization ${input.grantedOrgId} owns project ${projectId}: a project is granted to other organizations only`);
  }
  await requireActiveOrg(tx, actor.instanceId, input.grantedOrgId);
  const roleKeys = normalizedRoleKeys(input.roleKeys);
  await requireProjectRoles(tx, actor.instanceId, projectId, roleKeys);
  const existing = await tx
    .selectFrom("project_grants")
    .select("id")
    .where("instance_id", "=", actor.instanceId)
    .where("project_id", "=", projectId)
    .where("granted_org_id", "=", input.grantedOrgId)
    .executeTakeFirst();
  if (existing)
    throw alreadyExists(`project ${projectId} is granted to organization ${input.grantedOrgId} already (grant ${existing.id}); patch its roles instead`);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: project.org_id },
    0,
    [{ type: "project.grant.added", payload: { projectId, grantedOrgId: input.grantedOrgId, roleKeys } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: project.org_id,
    project_id: projectId,
    granted_org_id: input.grantedOrgId,
    role_keys: JSON.stringify(roleKeys),
    ...createdBy(appended),
  };
  await tx.insertInto("project_grants").values(row).execute();
  return projectGrantDetails(row);
}

/**
 * The grant locked for update, after its project share-locked: the order in which removals
 * of roles and projects lock them (project, then its grants), since the opposite order
 * deadlocks with them. A grant's project never changes, so reading it unlocked first is safe.
 */
async function projectGrantRowForUpdate(tx: Tx, instanceId: string, id: string): Promise<ProjectGrantRow> {
  const seen = await tx.selectFrom("project_grants").select("project_id").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst();
  if (!seen) throw notFound(`project grant ${id} not found`);
  await projectRowForUpdate(tx, instanceId, seen.project_id, "share");
  const row = await tx.selectFrom("project_grants").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`project grant ${id} not found`);
  return row;
}

async function changeProjectGrant(
  tx: Tx,
  actor: Actor,
  current: ProjectGrantRow,
  event: { type: string; payload: object },
  set: { role_keys?: string; state?: ProjectGrantState },
): Promise<ObjectDetails> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.org_id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, [event], actor, {
    table: "project_grants",
    key: { instance_id: actor.instanceId, id: current.id },
    set,
  });
  return projectGrantDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Replaces the role keys; the same set again changes nothing. A key taken away leaves every
 * user grant made under the grant in the same transaction, each with an event of its own.
 */
export async function patchProjectGrant(tx: Tx, actor: Actor, id: string, roleKeys: string[]): Promise<ObjectDetails> {
  const current = await projectGrantRowForUpdate(tx, actor.instanceId, id);
  const keys = normalizedRoleKeys(roleKeys);
  if (JSON.stringify(keys) === JSON.stringify(normalizedRoleKeys(current.role_keys))) return projectGrantDetails(current);
  await requireProjectRoles(tx, actor.instanceId, current.project_id, keys);
  const details = await changeProjectGrant(
    tx,
    actor,
    current,
    { type: "project.grant.changed", payload: { roleKeys: keys } },
    { role_keys: JSON.stringify(keys) },
  );
  const kept = new Set(keys);
  await cascadeRolesRemoval(
    tx,
    actor,
    { projectGrantId: id },
    current.role_keys.filter((k) => !kept.has(k)),
  );
  return details;
}

/** Deactivates or reactivates; the user grants made under it count for nothing while it is inactive. */
export async function setProjectGrantState(tx: Tx, actor: Actor, id: string, state: ProjectGrantState): Promise<ObjectDetails> {
  const current = await projectGrantRowForUpdate(tx, actor.instanceId, id);
  if (current.state === state) throw failedPrecondition(`project grant ${id} is already ${state === "active" ? "active" : "deactivated"}`);
  return changeProjectGrant(
    tx,
    actor,
    current,
    { type: state === "active" ? "project.grant.reactivated" : "project.grant.deactivated", payload: {} },
    { state },
  );
}

/** Removes a project grant with the user grants and memberships made under it; one event stands for all of it. */
export async function removeProjectGrant(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await projectGrantRowForUpdate(tx, actor.instanceId, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.org_id },
    current.sequence,
    [{ type: "project.grant.removed", payload: { projectId: current.project_id, grantedOrgId: current.granted_org_id } }],
    actor,
  );
  await removeProjectGrantsWhere(tx, actor.instanceId, "id", id);
  return projectGrantDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * Part of removing project grants: one, a project's or an organization's projects' (they are
 * removed), or those given to an organization (it is removed). The user grants made under them and the memberships
 * held in them go too; nothing may dangle.
 */
export async function removeProjectGrantsWhere(
  tx: Tx,
  instanceId: string,
  column: "id" | "project_id" | "org_id" | "granted_org_id",
  value: string,
): Promise<void> {
  const grants = tx.selectFrom("project_grants").select("id").where("instance_id", "=", instanceId).where(column, "=", value);
  // Locked first: a user grant or membership being made under one (holding a share lock) is removed too.
  await grants.forUpdate().execute();
  await tx
    .deleteFrom("memberships")
    .where("instance_id", "=", instanceId)
    .where("context_type", "=", "project_grant")
    .where("context_id", "in", grants)
    .execute();
  await tx.deleteFrom("user_grants").where("instance_id", "=", instanceId).where("project_grant_id", "in", grants).execute();
  await tx.deleteFrom("project_grants").where("instance_id", "=", instanceId).where(column, "=", value).execute();
}

/**
 * Part of removing a role from a project (the project is locked for update): every project
 * grant that gives it loses it, each with an event of its own. The user grants made under
 * them lose it with the project's own (cascadeRolesRemoval by project).
 */
export async function cascadeRoleRemovalToProjectGrants(tx: Tx, actor: Actor, projectId: string, key: string): Promise<void> {
  const affected = await tx
    .selectFrom("project_grants")
    .selectAll()
    .where("instance_id", "=", actor.instanceId)
    .where("project_id", "=", projectId)
    .where(sql<boolean>`role_keys @> ${JSON.stringify([key])}::jsonb`)
    .forUpdate()
    .execute();
  for (const grant of affected) {
    const roleKeys = grant.role_keys.filter((k) => k !== key);
    await changeProjectGrant(tx, actor, grant, { type: "project.grant.cascade.changed", payload: { roleKeys } }, { role_keys: JSON.stringify(roleKeys) });
  }
}
