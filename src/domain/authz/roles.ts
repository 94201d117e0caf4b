import type { MembershipContextType } from "../context.js";

/** Every permission a method may declare; method-rules.ts refuses any other. */
export const PERMISSIONS = [
  "system.instance.read",
  "system.instance.write",
  "system.instance.delete",
  "instance.read",
  "instance.write",
  "instance.notification.read",
  "instance.notification.write",
  "events.read",
  "org.read",
  "org.write",
  "org.delete",
  "org.domain.read",
  "org.domain.write",
  "user.read",
  "user.write",
  "user.delete",
  "user.credential.write",
  "user.schema.read",
  "user.schema.write",
  "user.schema.delete",
  "member.read",
  "member.write",
  "member.delete",
  "action.target.read",
  "action.target.write",
  "action.target.delete",
  "action.execution.write",
  "action.execution.delete",
  "execution.read",
  "idp.read",
  "idp.write",
  "idp.delete",
  "project.read",
  "project.write",
  "project.delete",
  "project.app.read",
  "project.app.write",
  "project.app.delete",
  "project.grant.read",
  "project.grant.write",
  "project.grant.delete",
  "user.grant.read",
  "user.grant.write",
  "user.grant.delete",
  "settings.write",
  "feature.read",
  "feature.write",
  "session.read",
  "session.write",
  "session.delete",
  "session.link",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

interface RoleDefinition {
  /** The only context a membership may grant this role in. */
  context: MembershipContextType;
  permissions: readonly Permission[];
}

const isRead = (p: Permission) => p.endsWith(".read");
const instanceOwner = PERMISSIONS.filter((p) => !p.startsWith("system."));
const orgOwner: readonly Permission[] = [
  "org.read",
  "org.write",
  "org.domain.read",
  "org.domain.write",
  "user.read",
  "user.write",
  "user.delete",
  "user.credential.write",
  "member.read",
  "member.write",
  "member.delete",
  "idp.read",
  "idp.write",
  "idp.delete",
  "project.read",
  "project.write",
  "project.delete",
  "project.app.read",
  "project.app.write",
  "project.app.delete",
  "project.grant.read",
  "project.grant.write",
  "project.grant.delete",
  "user.grant.read",
  "user.grant.write",
  "user.grant.delete",
  "settings.write",
  "events.read",
];

/**
 * One declarative table from role to permissions; authorization reads nothing else. A
 * permission granted in a context holds in the contexts inside it (system > instance >
 * org), so SYSTEM_OWNER holds everything everywhere and IAM_OWNER everything in its
 * instance. Viewers hold the read permissions of their owner role.
 */
export const ROLES = {
  SYSTEM_OWNER: { context: "system", permissions: PERMISSIONS },
  IAM_OWNER: { context: "instance", permissions: instanceOwner },
  IAM_OWNER_VIEWER: { context: "instance", permissions: instanceOwner.filter(isRead) },
  ORG_OWNER: { context: "org", permissions: orgOwner },
  ORG_OWNER_VIEWER: { context: "org", permissions: orgOwner.filter(isRead) },
  // The machine user behind a login UI of its own: it signs people in through sessions, and
  // reads the users it shows.
  LOGIN_CLIENT: { context: "instance", permissions: ["session.read", "session.write", "session.delete", "session.link", "user.read"] },
  // A user of an organization a project was granted to, who gives the grant's roles to that
  // organization's users: the user grants made under that one project grant, nothing else.
  PROJECT_GRANT_OWNER: { context: "project_grant", permissions: ["user.grant.read", "user.grant.write", "user.grant.delete"] },
} as const satisfies Record<string, RoleDefinition>;

export type RoleName = keyof typeof ROLES;

export function isRoleName(name: string): name is RoleName {
  return Object.hasOwn(ROLES, name);
}

export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}

export function permissionsOf(roles: readonly string[]): Set<string> {
  const granted = new Set<string>();
  for (const role of roles) {
    if (isRoleName(role)) for (const p of ROLES[role].permissions) granted.add(p);
  }
  return granted;
}
