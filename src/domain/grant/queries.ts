import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import { searchPage, type Page } from "../../store/search.js";
import { notFound } from "../errors.js";
import { AGGREGATE, grantView, type UserGrantView } from "./model.js";

/**
 * The organization owning a user grant (its project's, or the granted organization's under
 * a project grant) and the project grant; undefined when there is none.
 */
export async function ownerOfUserGrant(db: Db, instanceId: string, id: string): Promise<{ orgId: string; projectGrantId: string } | undefined> {
  const row = await db
    .selectFrom("user_grants")
    .select(["org_id", "project_grant_id"])
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && { orgId: row.org_id, projectGrantId: row.project_grant_id };
}

/** Grants with the organization of their user. */
function grants(db: Db, instanceId: string) {
  return db
    .selectFrom("user_grants")
    .innerJoin("users", (j) => j.onRef("users.instance_id", "=", "user_grants.instance_id").onRef("users.id", "=", "user_grants.user_id"))
    .where("user_grants.instance_id", "=", instanceId)
    .selectAll("user_grants")
    .select("users.org_id as user_org_id");
}

export async function getUserGrant(db: Db, instanceId: string, id: string): Promise<UserGrantView> {
  const row = await grants(db, instanceId).where("user_grants.id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`user grant ${id} not found`);
  return grantView(row);
}

export type UserGrantFilter = { userId: string } | { projectId: string } | { roleKey: string };

export interface UserGrantSearch {
  filters: UserGrantFilter[];
  sort: "created_at" | "change_date";
  page: Page;
  /** Only grants of these organizations (an organization ctx, or what the caller may read)… */
  within?: ReadonlySet<string>;
  /** …and those made under these project grants (where the caller is PROJECT_GRANT_OWNER). */
  withinProjectGrants?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchUserGrants(db: Db, instanceId: string, search: UserGrantSearch) {
  let query = db.selectFrom("user_grants").where("user_grants.instance_id", "=", instanceId);
  if (search.within) {
    const orgs = [...search.within, ""];
    const grants = [...(search.withinProjectGrants ?? [])];
    query =
      grants.length === 0
        ? query.where("user_grants.org_id", "in", orgs)
        : query.where((eb) => eb.or([eb("user_grants.org_id", "in", orgs), eb("user_grants.project_grant_id", "in", grants)]));
  }
  for (const filter of search.filters) {
    if ("userId" in filter) query = query.where("user_grants.user_id", "=", filter.userId);
    else if ("projectId" in filter) query = query.where("user_grants.project_id", "=", filter.projectId);
    else query = query.where(sql<boolean>`user_grants.role_keys @> ${JSON.stringify([filter.roleKey])}::jsonb`);
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy(`user_grants.${search.sort}`, direction).orderBy("user_grants.id", direction),
    search.page,
  );
  if (found.rows.length === 0) return { ...found, rows: [] };
  // The page read again with each user's organization: searchPage selects the table's own columns.
  const ids = found.rows.map((r) => r.id);
  const full = new Map((await grants(db, instanceId).where("user_grants.id", "in", ids).execute()).map((r) => [r.id, r]));
  return { ...found, rows: ids.flatMap((id) => (full.has(id) ? [grantView(full.get(id)!)] : [])) };
}

/**
 * A user's grant on an active project (made by the project's organization, or under an active
 * project grant), with its organization's primary domain: what role claims are made of.
 */
export interface RoleGrant {
  project_id: string;
  org_id: string;
  role_keys: string[];
  role_assertion: boolean;
  domain: string;
}

/**
 * A user grant `g` counts when its project grant (if any) is active: a deactivated one's
 * grants stay, for nothing, until it is reactivated. Shared with the account reads of userinfo
 * and introspection, which build their grants in SQL of their own.
 */
export const UNDER_ACTIVE_PROJECT_GRANT =
  "(g.project_grant_id = '' or exists (select 1 from project_grants pg where pg.instance_id = g.instance_id and pg.id = g.project_grant_id and pg.state = 'active'))";

/** The user's grants on these projects, the active ones. */
export async function roleGrantsOf(db: Db, instanceId: string, userId: string, projectIds: readonly string[]): Promise<RoleGrant[]> {
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
    .where(sql.raw<boolean>(UNDER_ACTIVE_PROJECT_GRANT))
    .execute();
  return rows as RoleGrant[];
}

/**
 * Whether the user holds a grant on the project that counts (under an active project grant,
 * if made under one), whatever its roles: what a project's project_role_check asks of a
 * sign-in to its applications.
 */
export async function hasUserGrantOn(db: Db, instanceId: string, userId: string, projectId: string): Promise<boolean> {
  const row = await db
    .selectFrom("user_grants as g")
    .select("g.id")
    .where("g.instance_id", "=", instanceId)
    .where("g.user_id", "=", userId)
    .where("g.project_id", "=", projectId)
    .where(sql.raw<boolean>(UNDER_ACTIVE_PROJECT_GRANT))
    .executeTakeFirst();
  return row !== undefined;
}
