import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import type { MembershipContextType } from "../context.js";
import { searchPage, type Page } from "../../store/search.js";
import { membershipDetails } from "./commands.js";

export type MembershipFilter = { userId: string } | { contextType: MembershipContextType } | { contextId: string } | { role: string };

export type MembershipSortColumn = "user_id" | "created_at" | "change_date";

export interface MembershipSearch {
  filters: MembershipFilter[];
  sort: MembershipSortColumn;
  page: Page;
  /**
   * Where to look: the system's memberships; one project grant's; one organization's (with
   * those of the project grants given to it); or the instance's and those of its
   * organizations and project grants, all of them or only the ones the caller may read.
   */
  scope: { system: true } | { projectGrant: string } | { orgs: ReadonlySet<string> } | { instanceAndOrgs: true };
}

/** Filters are combined with AND; ties of the sort column are broken by user and context. */
export async function searchMemberships(db: Db, instanceId: string, search: MembershipSearch) {
  let query = db.selectFrom("memberships");
  const { scope } = search;
  if ("system" in scope) {
    // System memberships of users of every instance: only system members get here.
    query = query.where("context_type", "=", "system");
  } else {
    query = query.where("instance_id", "=", instanceId);
    if ("projectGrant" in scope) query = query.where("context_type", "=", "project_grant").where("context_id", "=", scope.projectGrant);
    else if ("orgs" in scope) {
      const orgs = [...scope.orgs, ""];
      query = query.where((eb) =>
        eb.or([
          eb.and([eb("context_type", "=", "org"), eb("context_id", "in", orgs)]),
          eb.and([
            eb("context_type", "=", "project_grant"),
            eb(
              "context_id",
              "in",
              eb.selectFrom("project_grants as pg").select("pg.id").where("pg.instance_id", "=", instanceId).where("pg.granted_org_id", "in", orgs),
            ),
          ]),
        ]),
      );
    } else query = query.where("context_type", "in", ["instance", "org", "project_grant"]);
  }
  for (const filter of search.filters) {
    if ("userId" in filter) query = query.where("user_id", "=", filter.userId);
    else if ("contextType" in filter) query = query.where("context_type", "=", filter.contextType);
    else if ("contextId" in filter) query = query.where("context_id", "=", filter.contextId);
    else query = query.where(sql<boolean>`roles @> ${JSON.stringify([filter.role])}::jsonb`);
  }
  const found = await searchPage(
    db,
    "membership",
    instanceId,
    query,
    (q, direction) => q.orderBy(search.sort, direction).orderBy("user_id", direction).orderBy("context_type", direction).orderBy("context_id", direction),
    search.page,
  );
  return { ...found, rows: found.rows.map((row) => ({ details: membershipDetails(row), userId: row.user_id, roles: row.roles })) };
}
