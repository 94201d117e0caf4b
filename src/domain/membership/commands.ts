import { appendAndProject, appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { lastSequence } from "../../store/event-reads.js";
import type { MembershipContextType } from "../context.js";
import type { MembershipTable } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { projectGrantForShare } from "../project-grant/rows.js";
import { requireExisting } from "../existence.js";
import { mayGrant, scopeOf, type Principal } from "../authz/principal.js";
import { isRoleName, ROLES } from "../authz/roles.js";

export interface MembershipContext {
  type: MembershipContextType;
  /** Instance, organization or project grant id; ignored for the system context. */
  id: string;
}

export interface NewMembership {
  userId: string;
  contextType: MembershipContextType;
  /** Instance, organization or project grant id; ignored for the system context. */
  contextId: string;
  roles: string[];
}

/** A membership's details: the user's id, owned by the context it holds in. */
export function membershipDetails(row: Pick<MembershipTable, "user_id" | "context_type" | "context_id" | "sequence"> & { change_date: Date }): ObjectDetails {
  return { id: row.user_id, sequence: row.sequence, changeDate: row.change_date, owner: { type: row.context_type, id: row.context_id } };
}

/** `grantedOrgId`: for a project grant's memberships, the organization it was given to, whose they are. */
function aggregateOf(actor: Actor, context: MembershipContext, userId: string, grantedOrgId = "") {
  return {
    instanceId: actor.instanceId,
    type: "membership",
    id: `${context.type}/${context.id}/${userId}`,
    orgId: context.type === "org" ? context.id : grantedOrgId,
  };
}

/** The organization a project grant's memberships hold in (the one it was given to), for a membership context. */
async function grantedOrgOf(tx: Tx, actor: Actor, context: MembershipContext): Promise<string | undefined> {
  if (context.type !== "project_grant") return undefined;
  return (await projectGrantForShare(tx, actor.instanceId, { id: context.id })).granted_org_id;
}

/**
 * Every role must exist, fit the context, and be one the grantor could exercise there
 * (mayGrant): the one rule of the bootstrap and of every API that grants roles.
 */
function checkGrantable(roles: readonly string[], context: MembershipContext, actor: Actor, grantor: Principal, grantedOrgId?: string): void {
  const scope = scopeOf(context.type, context.id, actor.instanceId, grantedOrgId);
  for (const role of roles) {
    if (!isRoleName(role)) throw invalidArgument(`unknown role ${role}: ListAvailableRoles lists the roles of a context`);
    if (ROLES[role].context !== context.type) throw invalidArgument(`the role ${role} can only be granted in the ${ROLES[role].context} context`);
    if (!mayGrant(grantor, role, scope)) {
      throw permissionDenied(
        `granting ${role} needs member.write in that ${context.type}${ROLES[role].context === "system" ? " and a system membership" : ""}`,
      );
    }
  }
}

/** A user holds at most one membership per context. */
export async function addMembership(tx: Tx, actor: Actor, input: NewMembership, grantor: Principal): Promise<ObjectDetails> {
  if (input.roles.length === 0) throw invalidArgument("a membership needs at least one role");
  const context: MembershipContext = { type: input.contextType, id: input.contextType === "system" ? "" : input.contextId };
  const grantedOrgId = await grantedOrgOf(tx, actor, context);
  checkGrantable(input.roles, context, actor, grantor, grantedOrgId);
  if (context.type === "system") actor = { ...actor, instanceId: await instanceOfUser(tx, input.userId) };
  else {
    const userOrg = await requireExisting(tx, "users", actor.instanceId, input.userId);
    if (grantedOrgId !== undefined && userOrg !== grantedOrgId) {
      throw failedPrecondition(
        `user ${input.userId} is not of organization ${grantedOrgId}: a project grant's members are users of the organization it was given to`,
      );
    }
  }
  if (context.type === "instance" && context.id !== actor.instanceId) throw notFound(`instance ${context.id} not found`);
  if (context.type === "org") await requireExisting(tx, "orgs", actor.instanceId, context.id);
  if (await findMembership(tx, actor, context, input.userId))
    throw alreadyExists(`user ${input.userId} is already a member of that ${context.type}; patch its roles instead`);

  // A membership ended earlier leaves its events: a new one continues their sequence.
  const aggregate = aggregateOf(actor, context, input.userId, grantedOrgId);
  const appended = await appendEvents(
    tx,
    aggregate,
    await lastSequence(tx, aggregate),
    [{ type: `${context.type}.member.added`, payload: { userId: input.userId, contextId: context.id, roles: input.roles } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    user_id: input.userId,
    context_type: context.type,
    context_id: context.id,
    roles: JSON.stringify(input.roles),
    ...createdBy(appended),
  };
  await tx.insertInto("memberships").values(row).execute();
  return membershipDetails(row);
}

/** Replaces the roles; the same roles again change nothing. Roles added and removed must both be grantable. */
export async function changeMembershipRoles(
  tx: Tx,
  actor: Actor,
  context: MembershipContext,
  userId: string,
  roles: string[],
  grantor: Principal,
): Promise<ObjectDetails> {
  const grantedOrgId = await grantedOrgOf(tx, actor, context);
  const current = await membershipRowForUpdate(tx, actor, context, userId);
  actor = { ...actor, instanceId: current.instance_id };
  const added = roles.filter((r) => !current.roles.includes(r));
  const removed = current.roles.filter((r) => !roles.includes(r));
  checkGrantable([...added, ...removed], context, actor, grantor, grantedOrgId);
  if (added.length === 0 && removed.length === 0) return membershipDetails(current);
  const appended = await appendAndProject(
    tx,
    aggregateOf(actor, context, userId, grantedOrgId),
    current.sequence,
    [{ type: `${context.type}.member.changed`, payload: { userId, roles } }],
    actor,
    {
      table: "memberships",
      key: { instance_id: actor.instanceId, user_id: userId, context_type: context.type, context_id: context.id },
      set: { roles: JSON.stringify(roles) },
    },
  );
  return membershipDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

export async function removeMembership(tx: Tx, actor: Actor, context: MembershipContext, userId: string, grantor: Principal): Promise<ObjectDetails> {
  const grantedOrgId = await grantedOrgOf(tx, actor, context);
  const current = await membershipRowForUpdate(tx, actor, context, userId);
  actor = { ...actor, instanceId: current.instance_id };
  // Only who could grant a role may take it away: no IAM_OWNER removes a SYSTEM_OWNER.
  checkGrantable(current.roles, context, actor, grantor, grantedOrgId);
  const appended = await appendEvents(
    tx,
    aggregateOf(actor, context, userId, grantedOrgId),
    current.sequence,
    [{ type: `${context.type}.member.removed`, payload: { userId } }],
    actor,
  );
  await tx
    .deleteFrom("memberships")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("context_type", "=", context.type)
    .where("context_id", "=", context.id)
    .execute();
  return membershipDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

/**
 * System memberships belong to users of any instance and are kept in the user's instance;
 * only system members act in the system context, so they are found in every instance.
 */
function findMembership(tx: Tx, actor: Actor, context: MembershipContext, userId: string) {
  let query = tx.selectFrom("memberships").selectAll();
  if (context.type !== "system") query = query.where("instance_id", "=", actor.instanceId);
  return query.where("user_id", "=", userId).where("context_type", "=", context.type).where("context_id", "=", context.id).forUpdate().executeTakeFirst();
}

async function instanceOfUser(tx: Tx, userId: string): Promise<string> {
  const user = await tx.selectFrom("users").select("instance_id").where("id", "=", userId).forShare().executeTakeFirst();
  if (!user) throw notFound(`user ${userId} not found`);
  return user.instance_id;
}

async function membershipRowForUpdate(tx: Tx, actor: Actor, context: MembershipContext, userId: string) {
  const row = await findMembership(tx, actor, context, userId);
  if (!row) throw notFound(`user ${userId} has no membership in that ${context.type}`);
  return row;
}
