import type { ContextType } from "../../store/schema.js";
import { permissionsOf } from "./roles.js";

export interface Grant {
  contextType: ContextType;
  contextId: string;
  permissions: Set<string>;
}

/** An authenticated caller and what its memberships allow, wherever they are. */
export interface Principal {
  userId: string;
  /** The instance the user belongs to. */
  instanceId: string;
  grants: Grant[];
}

/** Where a request acts; permissions of enclosing contexts apply inside it. */
export interface Scope {
  instanceId: string;
  orgId?: string;
}

export function grantsFrom(
  memberships: { context_type: ContextType; context_id: string; roles: string[] }[],
): Grant[] {
  return memberships.map((m) => ({
    contextType: m.context_type,
    contextId: m.context_id,
    permissions: permissionsOf(m.roles),
  }));
}

export function isSystemMember(principal: Principal): boolean {
  return principal.grants.some((g) => g.contextType === "system");
}

export function hasPermission(principal: Principal, permission: string, scope: Scope): boolean {
  return principal.grants.some((grant) => {
    if (!grant.permissions.has(permission)) return false;
    switch (grant.contextType) {
      case "system":
        return true;
      case "instance":
        return principal.instanceId === scope.instanceId && grant.contextId === scope.instanceId;
      case "org":
        return principal.instanceId === scope.instanceId && grant.contextId === scope.orgId;
    }
  });
}
