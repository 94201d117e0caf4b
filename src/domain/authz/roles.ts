import type { ContextType } from "../../store/schema.js";

/** The spec's permission strings. */
export const PERMISSIONS = [
  "action.target.read",
  "action.target.write",
  "action.target.delete",
  "action.execution.write",
  "action.execution.delete",
  "execution.read",
  "idp.read",
  "idp.write",
  "idp.delete",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

interface RoleDefinition {
  /** The only context a membership may grant this role in. */
  context: ContextType;
  permissions: readonly Permission[];
}

const READ: readonly Permission[] = ["action.target.read", "execution.read", "idp.read"];

/** One declarative table from role to permissions; authorization reads nothing else. */
export const ROLES = {
  SYSTEM_OWNER: { context: "system", permissions: PERMISSIONS },
  IAM_OWNER: { context: "instance", permissions: PERMISSIONS },
  IAM_OWNER_VIEWER: { context: "instance", permissions: READ },
  ORG_OWNER: { context: "org", permissions: ["idp.read", "idp.write", "idp.delete"] },
  ORG_OWNER_VIEWER: { context: "org", permissions: ["idp.read"] },
} as const satisfies Record<string, RoleDefinition>;

export type RoleName = keyof typeof ROLES;

export function isRoleName(name: string): name is RoleName {
  return Object.hasOwn(ROLES, name);
}

export function permissionsOf(roles: readonly string[]): Set<string> {
  const granted = new Set<string>();
  for (const role of roles) {
    if (isRoleName(role)) for (const p of ROLES[role].permissions) granted.add(p);
  }
  return granted;
}
