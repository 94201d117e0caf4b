import { sql } from "kysely";
import type { Db } from "../store/db.js";
import { requestedRoles } from "./scopes.js";

export const ROLES_CLAIM = "urn:platform:iam:org:project:roles";

/**
 * The role claims of a user for projects (ZITADEL's shape): `{ <role key>: { <org id>:
 * <org primary domain> } }` under `urn:platform:iam:org:project:roles`, and per project
 * under `urn:platform:iam:org:project:<project id>:roles`. A project's roles are asserted
 * when it asks for it (`project_role_assertion`) or when the scopes ask for roles
 * (`urn:platform:iam:org:project:role:<key>`, which also limit the keys).
 */
export async function roleClaims(db: Db, instanceId: string, userId: string, projectIds: readonly string[], scopes: readonly string[]): Promise<Record<string, unknown>> {
  if (projectIds.length === 0) return {};
  const rows = await db
    .selectFrom("user_grants as g")
    .innerJoin("projects as p", (j) => j.onRef("p.instance_id", "=", "g.instance_id").onRef("p.id", "=", "g.project_id"))
    .select([
      "g.project_id",
      "g.org_id",
      "g.role_keys",
      "p.role_assertion",
      sql<string>`coalesce((select d.domain from org_domains d where d.instance_id = g.instance_id and d.org_id = g.org_id and d.is_primary), '')`.as("domain"),
    ])
    .where("g.instance_id", "=", instanceId)
    .where("g.user_id", "=", userId)
    .where("g.project_id", "in", projectIds)
    .where("p.state", "=", "active")
    .execute();
  return roleClaimsOf(rows as GrantRow[], scopes);
}

/** A user's grant on an active project, with its organization's primary domain. */
export interface GrantRow {
  project_id: string;
  org_id: string;
  role_keys: string[];
  role_assertion: boolean;
  domain: string;
}

/** The role claims of grants already loaded (accounts.ts loads them with the account). */
export function roleClaimsOf(rows: readonly GrantRow[], scopes: readonly string[]): Record<string, unknown> {
  const asked = requestedRoles(scopes);
  const all: Record<string, Record<string, string>> = {};
  const claims: Record<string, unknown> = {};
  for (const row of rows) {
    if (!row.role_assertion && asked.length === 0) continue;
    const keys = (row.role_keys as string[]).filter((k) => asked.length === 0 || asked.includes(k));
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
