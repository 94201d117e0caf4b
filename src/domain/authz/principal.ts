import type { ContextRef, MembershipContextType, Scope } from "../context.js";
import { ROLES, permissionsOf, type RoleName } from "./roles.js";

export interface Grant {
  contextType: MembershipContextType;
  contextId: string;
  permissions: Set<string>;
}

/** An authenticated caller and what its memberships allow, wherever they are. */
export interface Principal {
  userId: string;
  /** The instance the user belongs to. */
  instanceId: string;
  /** The organization the user belongs to; "" for the bootstrap. */
  orgId: string;
  grants: Grant[];
  /** What the caller authenticated through, recorded with its changes: `app:<client id>` or `pat:<token id>`. */
  client?: string;
}

/**
 * The scope a membership's roles hold in: the system, its instance, one organization of it,
 * or one project grant (inside `grantedOrgId`, the organization it was given to).
 */
export function scopeOf(contextType: MembershipContextType, contextId: string, instanceId: string, grantedOrgId?: string): Scope {
  if (contextType === "system") return { system: true };
  if (contextType === "project_grant") return { instanceId, orgId: grantedOrgId ?? "", projectGrantId: contextId };
  return { instanceId, ...(contextType === "org" && { orgId: contextId }) };
}

export function grantsFrom(memberships: { context_type: MembershipContextType; context_id: string; roles: string[] }[]): Grant[] {
  return memberships.map((m) => ({
    contextType: m.context_type,
    contextId: m.context_id,
    permissions: permissionsOf(m.roles),
  }));
}

/** The bootstrap acts before anyone could hold a membership: as the system's owner. */
export const BOOTSTRAP_PRINCIPAL: Principal = {
  userId: "system",
  instanceId: "",
  orgId: "",
  grants: grantsFrom([{ context_type: "system", context_id: "", roles: ["SYSTEM_OWNER"] }]),
};

/**
 * Whether the caller belongs to a context: as a user of it (a user of an organization
 * belongs to its instance too), or by a membership there or in an enclosing context.
 */
export function belongsTo(principal: Principal, context: ContextRef): boolean {
  if (context.type !== "system" && principal.instanceId === context.instanceId && (context.type === "instance" || principal.orgId === context.orgId))
    return true;
  return principal.grants.some((grant) => {
    if (grant.contextType === "system") return true;
    if (context.type === "system" || principal.instanceId !== context.instanceId) return false;
    return grant.contextType === "instance" || (context.type === "org" && grant.contextId === context.orgId);
  });
}

export function isSystemMember(principal: Principal): boolean {
  return principal.grants.some((g) => g.contextType === "system");
}

export function hasPermission(principal: Principal, permission: string, scope: Scope): boolean {
  return principal.grants.some((grant) => {
    if (!grant.permissions.has(permission)) return false;
    if (grant.contextType === "system") return true;
    if (scope.system || principal.instanceId !== scope.instanceId) return false;
    if (grant.contextType === "project_grant") return grant.contextId === scope.projectGrantId;
    return grant.contextType === "instance" ? grant.contextId === scope.instanceId : grant.contextId === scope.orgId;
  });
}

/** The project grants of an instance where the caller holds a permission by a PROJECT_GRANT_OWNER membership. */
export function projectGrantsWith(principal: Principal, permission: string, instanceId: string): Set<string> {
  const grants = new Set<string>();
  if (principal.instanceId !== instanceId) return grants;
  for (const grant of principal.grants) {
    if (grant.contextType === "project_grant" && grant.permissions.has(permission)) grants.add(grant.contextId);
  }
  return grants;
}

/**
 * Where within an instance the caller holds a permission: everywhere ("all"), or in these
 * organizations only. Searches show what the caller may read and nothing else.
 */
export function organizationsWith(principal: Principal, permission: string, instanceId: string): "all" | Set<string> {
  if (hasPermission(principal, permission, { instanceId })) return "all";
  const orgs = new Set<string>();
  if (principal.instanceId !== instanceId) return orgs;
  for (const grant of principal.grants) {
    if (grant.contextType === "org" && grant.permissions.has(permission)) orgs.add(grant.contextId);
  }
  return orgs;
}

/** Whether the caller holds a permission anywhere in an instance: who may learn what exists there. */
export function holdsAnywhere(principal: Principal, permission: string, instanceId: string): boolean {
  const where = organizationsWith(principal, permission, instanceId);
  return where === "all" || where.size > 0 || projectGrantsWith(principal, permission, instanceId).size > 0;
}

/**
 * A caller may grant only roles it could exercise itself: it needs member.write where the
 * membership is, and only system members grant system roles. The bootstrap and every API
 * that creates memberships go through this one rule.
 */
export function mayGrant(grantor: Principal, role: RoleName, scope: Scope): boolean {
  if (ROLES[role].context === "system" && !isSystemMember(grantor)) return false;
  return hasPermission(grantor, "member.write", scope);
}
