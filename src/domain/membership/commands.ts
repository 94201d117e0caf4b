import { appendEvents, createdBy, type Tx } from "../../store/eventstore.js";
import type { ContextType } from "../../store/schema.js";
import type { Actor } from "../details.js";
import { alreadyExists, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { requireExisting } from "../existence.js";
import { mayGrant, type Principal, type Scope } from "../authz/principal.js";
import { isRoleName, ROLES } from "../authz/roles.js";

export interface NewMembership {
  userId: string;
  contextType: ContextType;
  /** Instance or organization id; ignored for the system context. */
  contextId: string;
  roles: string[];
}

/**
 * A user holds at most one membership per context; its roles must fit that context, and
 * the grantor must be allowed to grant each of them there.
 */
export async function addMembership(tx: Tx, actor: Actor, input: NewMembership, grantor: Principal) {
  if (input.roles.length === 0) throw invalidArgument("a membership needs at least one role");
  const contextId = input.contextType === "system" ? "" : input.contextId;
  const scope: Scope =
    input.contextType === "system" ? { system: true } : { instanceId: actor.instanceId, ...(input.contextType === "org" && { orgId: contextId }) };
  for (const role of input.roles) {
    if (!isRoleName(role)) throw invalidArgument(`unknown role ${role}`);
    if (ROLES[role].context !== input.contextType) {
      throw invalidArgument(`the role ${role} can only be granted in the ${ROLES[role].context} context`);
    }
    if (!mayGrant(grantor, role, scope)) throw permissionDenied(`granting ${role} needs member.write in that ${input.contextType}${ROLES[role].context === "system" ? " and a system membership" : ""}`);
  }
  await requireExisting(tx, "users", actor.instanceId, input.userId);
  if (input.contextType === "instance" && contextId !== actor.instanceId) {
    throw notFound(`instance ${contextId} not found`);
  }
  if (input.contextType === "org") await requireExisting(tx, "orgs", actor.instanceId, contextId);
  const existing = await tx
    .selectFrom("memberships")
    .select("user_id")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", input.userId)
    .where("context_type", "=", input.contextType)
    .where("context_id", "=", contextId)
    .executeTakeFirst();
  if (existing) throw alreadyExists(`user ${input.userId} is already a member of that ${input.contextType}`);

  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: "membership", id: `${input.contextType}/${contextId}/${input.userId}` },
    0,
    [{ type: `${input.contextType}.member.added`, payload: { userId: input.userId, contextId, roles: input.roles } }],
    actor.userId,
  );
  await tx
    .insertInto("memberships")
    .values({
      instance_id: actor.instanceId,
      user_id: input.userId,
      context_type: input.contextType,
      context_id: contextId,
      roles: JSON.stringify(input.roles),
      ...createdBy(appended),
    })
    .execute();
}
