import { roleGrantsOf, type RoleGrant } from "../../domain/grant/queries.js";
import type { Db } from "../../store/db.js";
import { requestedRoles } from "./scopes.js";

export const ROLES_CLAIM = "urn:platform:iam:org:project:roles";

/**
 * The role claims of a user for projects (ZITADEL's shape): `{ <role key>: { <org id>:
 * <org primary domain> } }` under `urn:platform:iam:org:project:roles`, and per project
 * under `urn:platform:iam:org:project:<project id>:roles`. A project's roles are asserted
 * when it asks for it (`project_role_assertion`) or when the scopes ask for roles
 * (`urn:platform:iam:org:project:role:<key>`, which also limit the keys).
 */
export async function roleClaims(
  db: Db,
  instanceId: string,
  userId: string,
  projectIds: readonly string[],
  scopes: readonly string[],
): Promise<Record<string, unknown>> {
  if (projectIds.length === 0) return {};
  return roleClaimsOf(await roleGrantsOf(db, instanceId, userId, projectIds), scopes);
}

/** The role claims of grants already loaded (domain/user/accounts.ts loads them with the account). */
export function roleClaimsOf(rows: readonly RoleGrant[], scopes: readonly string[]): Record<string, unknown> {
  const asked = requestedRoles(scopes);
  const all: Record<string, Record<string, string>> = {};
  const claims: Record<string, unknown> = {};
  for (const row of rows) {
    if (!row.role_assertion && asked.length === 0) continue;
    const keys = row.role_keys.filter((k) => asked.length === 0 || asked.includes(k));
    if (keys.length === 0) continue;
    const perProject = (claims[`urn:platform:iam:org:project:${row.project_id}:roles`] ??= {}) as Record<string, Record<string, string>>;
    for (const key of keys) {
      (all[key] ??= {})[row.org_id] = row.domain;
      (perProject[key] ??= {})[row.org_id] = row.domain;
    }
  }
  if (Object.keys(all).length > 0) claims[ROLES_CLAIM] = all;
  return claims;
}
