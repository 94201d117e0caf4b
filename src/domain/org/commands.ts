import { refuseConsoleChange } from "../app/console-guard.js";
import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { OrgRow } from "../../store/schema.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition } from "../errors.js";
import { claimGeneratedDomain, recordGeneratedDomain } from "../org-domain/commands.js";
import { removeOrgUsers } from "../user/commands.js";
import { removeOrgIdps } from "../idp/commands.js";
import { removeProjectsWhere } from "../project/commands.js";
import { removeProjectGrantsWhere } from "../project-grant/commands.js";
import { removeContextSettings } from "../settings/rows.js";
import { AGGREGATE } from "./model.js";
import { orgRowForUpdate } from "./row-lock.js";

/** Creates an organization with its generated primary domain. */
export async function addOrg(tx: Tx, actor: Actor, input: { id?: string; name: string }) {
  await ensureNameFree(tx, actor.instanceId, input.name);
  const id = input.id ?? newId();
  const domain = await claimGeneratedDomain(tx, actor.instanceId, id, input.name);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: id },
    0,
    [
      { type: "org.added", payload: { name: input.name } },
      { type: "org.domain.added", payload: { domain, generated: true, verified: true } },
      { type: "org.domain.primary.set", payload: { domain } },
    ],
    actor,
  );
  const row = { instance_id: actor.instanceId, id, name: input.name, ...createdBy(appended) };
  await tx.insertInto("orgs").values(row).execute();
  await recordGeneratedDomain(tx, actor.instanceId, domain, appended);
  return { id, domain, details: instanceOwnedDetails(row) };
}

/** A patch that changes nothing succeeds without an event. */
export async function renameOrg(tx: Tx, actor: Actor, id: string, name: string | undefined): Promise<ObjectDetails> {
  const current = await orgRowForUpdate(tx, actor.instanceId, id);
  if (name === undefined || name === current.name) return instanceOwnedDetails(current);
  if (name.toLowerCase() !== current.name.toLowerCase()) await ensureNameFree(tx, actor.instanceId, name);
  return changeOrg(tx, actor, current, { type: "org.changed", payload: { name } }, { name });
}

export async function setOrgState(tx: Tx, actor: Actor, id: string, state: "active" | "inactive"): Promise<ObjectDetails> {
  const current = await orgRowForUpdate(tx, actor.instanceId, id);
  if (current.state === state) {
    throw failedPrecondition(`organization ${id} is already ${state === "active" ? "active" : "deactivated"}`);
  }
  if (state === "inactive") await refuseForDefault(tx, actor.instanceId, id, "deactivated");
  return changeOrg(tx, actor, current, { type: state === "active" ? "org.reactivated" : "org.deactivated", payload: {} }, { state });
}

/**
 * Removes the organization and, in the same transaction, its projects with their roles and
 * grants, the project grants given to it, its domains, its users with their memberships, credentials and grants, every
 * membership in it, its identity providers and policies, and its settings. One org.removed
 * event stands for all of it, as a replay of the removal would remove them too, except the
 * users: each gets its user.removed event (event executions on it hear of every user gone).
 */
export async function removeOrg(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await orgRowForUpdate(tx, actor.instanceId, id);
  await refuseForDefault(tx, actor.instanceId, id, "deleted");
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: id },
    current.sequence,
    [{ type: "org.removed", payload: { name: current.name } }],
    actor,
  );
  // Projects before users: grant creations lock the project, then the user, and so does this.
  await removeProjectsWhere(tx, actor.instanceId, "org_id", id);
  // Then the grants of other organizations' projects to it, with what was made under them.
  await removeProjectGrantsWhere(tx, actor.instanceId, "granted_org_id", id);
  await removeOrgUsers(tx, actor, id);
  await tx.deleteFrom("memberships").where("instance_id", "=", actor.instanceId).where("context_type", "=", "org").where("context_id", "=", id).execute();
  await tx.deleteFrom("org_domains").where("instance_id", "=", actor.instanceId).where("org_id", "=", id).execute();
  await removeOrgIdps(tx, actor.instanceId, id);
  await removeContextSettings(tx, { type: "org", instanceId: actor.instanceId, orgId: id });
  await tx.deleteFrom("orgs").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

async function changeOrg(
  tx: Tx,
  actor: Actor,
  current: OrgRow,
  event: { type: string; payload: unknown },
  set: { name?: string; state?: "active" | "inactive" },
): Promise<ObjectDetails> {
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id: current.id, orgId: current.id };
  const appended = await appendAndProject(tx, aggregate, current.sequence, [event], actor, {
    table: "orgs",
    key: { instance_id: actor.instanceId, id: current.id },
    set,
  });
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

async function refuseForDefault(tx: Tx, instanceId: string, id: string, what: string): Promise<void> {
  const instance = await tx
    .selectFrom("instances")
    .select("default_org_id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .executeTakeFirst();
  if (instance?.default_org_id === id) {
    throw failedPrecondition(`organization ${id} is the instance's default organization and cannot be ${what}; make another one the default first`);
  }
  await refuseConsoleChange(tx, instanceId, { orgId: id });
}

async function ensureNameFree(tx: Tx, instanceId: string, name: string): Promise<void> {
  const taken = await tx
    .selectFrom("orgs")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where((eb) => eb(eb.fn("lower", [eb.ref("name")]), "=", eb.fn("lower", [eb.val(name)])))
    .executeTakeFirst();
  if (taken) throw alreadyExists(`an organization named "${name}" already exists`);
}
