import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import { AGGREGATE, projectDetails, type ProjectRow, type ProjectState, roleView } from "./model.js";
import type { Actor, ObjectDetails } from "../details.js";
import { refuseConsoleChange } from "../app/console-guard.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { requireActiveOrg } from "../existence.js";
import { cascadeRolesRemoval } from "../grant/commands.js";
import { cascadeRoleRemovalToProjectGrants, removeProjectGrantsWhere } from "../project-grant/commands.js";
import { projectRowForUpdate } from "./rows.js";

export interface ProjectSpec {
  name: string;
  roleAssertion: boolean;
  roleCheck: boolean;
}

export interface ProjectPatch {
  name?: string;
  roleAssertion?: boolean;
  roleCheck?: boolean;
}

export interface RoleSpec {
  key: string;
  displayName: string;
  group: string;
}

async function ensureNameFree(tx: Tx, instanceId: string, orgId: string, name: string, except?: string): Promise<void> {
  let query = tx
    .selectFrom("projects")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("org_id", "=", orgId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("name")]), "=", eb.fn("lower", [eb.val(name)])));
  if (except) query = query.where("id", "!=", except);
  if (await query.executeTakeFirst()) throw alreadyExists(`a project named "${name}" already exists in organization ${orgId}`);
}

/** Creates a project in an active organization, which owns it. */
export async function addProject(tx: Tx, actor: Actor, orgId: string, spec: ProjectSpec): Promise<ObjectDetails> {
  await requireActiveOrg(tx, actor.instanceId, orgId);
  await ensureNameFree(tx, actor.instanceId, orgId, spec.name);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId },
    0,
    [{ type: "project.added", payload: { orgId, ...spec } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    org_id: orgId,
    name: spec.name,
    role_assertion: spec.roleAssertion,
    role_check: spec.roleCheck,
    ...createdBy(appended),
  };
  await tx.insertInto("projects").values(row).execute();
  return projectDetails(row);
}

async function changeProject(
  tx: Tx,
  actor: Actor,
  current: ProjectRow,
  event: { type: string; payload: unknown },
  set: Partial<Pick<ProjectRow, "name" | "role_assertion" | "role_check" | "state">> = {},
): Promise<ProjectRow> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.org_id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, [event], actor, {
    table: "projects",
    key: { instance_id: actor.instanceId, id: current.id },
    set,
  });
  return { ...current, ...set, sequence: appended.sequence, change_date: appended.createdAt };
}

/** A patch that changes nothing succeeds without an event. */
export async function patchProject(tx: Tx, actor: Actor, id: string, patch: ProjectPatch): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, id);
  const changed: ProjectPatch = {};
  if (patch.name !== undefined && patch.name !== current.name) changed.name = patch.name;
  if (patch.roleAssertion !== undefined && patch.roleAssertion !== current.role_assertion) changed.roleAssertion = patch.roleAssertion;
  if (patch.roleCheck !== undefined && patch.roleCheck !== current.role_check) changed.roleCheck = patch.roleCheck;
  if (Object.keys(changed).length === 0) return projectDetails(current);
  if (changed.name !== undefined) await ensureNameFree(tx, actor.instanceId, current.org_id, changed.name, id);
  const updated = await changeProject(
    tx,
    actor,
    current,
    { type: "project.changed", payload: changed },
    {
      ...(changed.name !== undefined && { name: changed.name }),
      ...(changed.roleAssertion !== undefined && { role_assertion: changed.roleAssertion }),
      ...(changed.roleCheck !== undefined && { role_check: changed.roleCheck }),
    },
  );
  return projectDetails(updated);
}

export async function setProjectState(tx: Tx, actor: Actor, id: string, state: ProjectState): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, id);
  await refuseConsoleChange(tx, actor.instanceId, { projectId: id });
  if (current.state === state) throw failedPrecondition(`project ${id} is already ${state === "active" ? "active" : "deactivated"}`);
  return projectDetails(
    await changeProject(tx, actor, current, { type: state === "active" ? "project.reactivated" : "project.deactivated", payload: {} }, { state }),
  );
}

/** Removes a project with its roles, its applications and every user grant on it; one event stands for all of it. */
export async function removeProject(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, id);
  await refuseConsoleChange(tx, actor.instanceId, { projectId: id });
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: current.org_id },
    current.sequence,
    [{ type: "project.removed", payload: { name: current.name } }],
    actor,
  );
  await removeProjectsWhere(tx, actor.instanceId, "id", id);
  return projectDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/** Part of removing projects (one, or an organization's): their project grants, user grants, applications, roles and rows. */
export async function removeProjectsWhere(tx: Tx, instanceId: string, column: "id" | "org_id", value: string): Promise<void> {
  const projects = tx.selectFrom("projects").select("id").where("instance_id", "=", instanceId).where(column, "=", value);
  // Locked first: a grant being created (holding a share lock on its project) is removed too.
  await projects.forUpdate().execute();
  // A project grant's org_id is its project's: an organization's projects' grants are its own.
  await removeProjectGrantsWhere(tx, instanceId, column === "id" ? "project_id" : "org_id", value);
  await tx.deleteFrom("user_grants").where("instance_id", "=", instanceId).where("project_id", "in", projects).execute();
  const apps = tx.selectFrom("apps").select("id").where("instance_id", "=", instanceId).where("project_id", "in", projects);
  await tx.deleteFrom("app_keys").where("instance_id", "=", instanceId).where("app_id", "in", apps).execute();
  await tx.deleteFrom("apps").where("instance_id", "=", instanceId).where("project_id", "in", projects).execute();
  await tx.deleteFrom("project_roles").where("instance_id", "=", instanceId).where("project_id", "in", projects).execute();
  await tx.deleteFrom("projects").where("instance_id", "=", instanceId).where(column, "=", value).execute();
}

async function findRole(tx: Tx, instanceId: string, projectId: string, key: string) {
  return tx
    .selectFrom("project_roles")
    .selectAll()
    .where("instance_id", "=", instanceId)
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .executeTakeFirst();
}

export async function addProjectRole(tx: Tx, actor: Actor, projectId: string, role: RoleSpec): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, projectId);
  if (await findRole(tx, actor.instanceId, projectId, role.key)) throw alreadyExists(`project ${projectId} has a role "${role.key}" already`);
  const updated = await changeProject(tx, actor, current, { type: "project.role.added", payload: role });
  const row = {
    instance_id: actor.instanceId,
    project_id: projectId,
    key: role.key,
    display_name: role.displayName,
    group_name: role.group,
    created_at: updated.change_date,
  };
  await tx.insertInto("project_roles").values(row).execute();
  return roleView(row, updated).details;
}

export async function patchProjectRole(
  tx: Tx,
  actor: Actor,
  projectId: string,
  key: string,
  patch: { displayName?: string; group?: string },
): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, projectId);
  const role = await findRole(tx, actor.instanceId, projectId, key);
  if (!role) throw notFound(`project ${projectId} has no role "${key}"`);
  const changed: { displayName?: string; group?: string } = {};
  if (patch.displayName !== undefined && patch.displayName !== role.display_name) changed.displayName = patch.displayName;
  if (patch.group !== undefined && patch.group !== role.group_name) changed.group = patch.group;
  if (Object.keys(changed).length === 0) return roleView(role, current).details;
  const updated = await changeProject(tx, actor, current, { type: "project.role.changed", payload: { key, ...changed } });
  const set = {
    ...(changed.displayName !== undefined && { display_name: changed.displayName }),
    ...(changed.group !== undefined && { group_name: changed.group }),
  };
  await tx
    .updateTable("project_roles")
    .set(set)
    .where("instance_id", "=", actor.instanceId)
    .where("project_id", "=", projectId)
    .where("key", "=", key)
    .execute();
  return roleView({ ...role, ...set }, updated).details;
}

/** Removes a role and takes it out of every project grant and user grant that gives it, each with its own event. */
export async function removeProjectRole(tx: Tx, actor: Actor, projectId: string, key: string): Promise<ObjectDetails> {
  const current = await projectRowForUpdate(tx, actor.instanceId, projectId);
  const role = await findRole(tx, actor.instanceId, projectId, key);
  if (!role) throw notFound(`project ${projectId} has no role "${key}"`);
  const updated = await changeProject(tx, actor, current, { type: "project.role.removed", payload: { key } });
  await tx.deleteFrom("project_roles").where("instance_id", "=", actor.instanceId).where("project_id", "=", projectId).where("key", "=", key).execute();
  await cascadeRoleRemovalToProjectGrants(tx, actor, projectId, key);
  await cascadeRolesRemoval(tx, actor, { projectId }, [key]);
  return roleView(role, updated).details;
}
