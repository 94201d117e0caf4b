import { sql, type ExpressionBuilder } from "kysely";
import type { Db } from "../../store/db.js";
import { AGGREGATE, type OrgState, orgView, type OrgView } from "./model.js";
import type { Database } from "../../store/schema.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";

/** Organizations with their primary domain and whether they are their instance's default. */
function orgs(db: Db, instanceId: string) {
  return db
    .selectFrom("orgs")
    .where("orgs.instance_id", "=", instanceId)
    .select((eb) => [
      eb
        .selectFrom("org_domains as d")
        .select("d.domain")
        .whereRef("d.instance_id", "=", "orgs.instance_id")
        .whereRef("d.org_id", "=", "orgs.id")
        .where("d.is_primary", "=", true)
        .as("primary_domain"),
      eb
        .exists(
          eb
            .selectFrom("instances as i")
            .select("i.id")
            .whereRef("i.instance_id", "=", "orgs.instance_id")
            .whereRef("i.id", "=", "orgs.instance_id")
            .whereRef("i.default_org_id", "=", "orgs.id"),
        )
        .$castTo<boolean>()
        .as("is_default"),
    ]);
}

export async function getOrg(db: Db, instanceId: string, id: string): Promise<OrgView> {
  const row = await orgs(db, instanceId).selectAll("orgs").where("orgs.id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`organization ${id} not found`);
  return orgView(row);
}

export type OrgFilter =
  { ids: string[] } | { name: { value: string; match: TextMatch } } | { domain: { value: string; match: TextMatch } } | { state: OrgState };

export type OrgSortColumn = "id" | "created_at" | "change_date" | "name" | "state" | "primary_domain";

export interface OrgSearch {
  filters: OrgFilter[];
  sort: OrgSortColumn;
  page: Page;
  /** Only these organizations (what the caller may read); undefined: all of the instance. */
  within?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchOrgs(db: Db, instanceId: string, search: OrgSearch) {
  let query = db.selectFrom("orgs").where("orgs.instance_id", "=", instanceId);
  if (search.within) query = query.where("orgs.id", "in", [...search.within, ""]);
  for (const filter of search.filters) {
    if ("ids" in filter) query = query.where((eb) => eb("orgs.id", "=", eb.fn.any(eb.val(filter.ids))));
    else if ("name" in filter) query = query.where((eb) => textMatches(eb, eb.ref("orgs.name"), filter.name.match, filter.name.value));
    else if ("state" in filter) query = query.where("orgs.state", "=", filter.state);
    else {
      const { value, match } = filter.domain;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom("org_domains as d")
            .select("d.domain")
            .whereRef("d.instance_id", "=", "orgs.instance_id")
            .whereRef("d.org_id", "=", "orgs.id")
            .where((d) => textMatches(d, d.ref("d.domain"), match, value)),
        ),
      );
    }
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy("orgs.id", direction),
    search.page,
    ["id"],
  );
  if (found.rows.length === 0) return { ...found, rows: [] };
  // The page's orgs, read again with their domain and default flag: the page's statement reads their ids.
  const ids = found.rows.map((r) => r.id);
  const full = new Map((await orgs(db, instanceId).selectAll("orgs").where("orgs.id", "in", ids).execute()).map((r) => [r.id, r]));
  return { ...found, rows: ids.flatMap((id) => (full.has(id) ? [orgView(full.get(id)!)] : [])) };
}

/** Text columns sort byte-wise, so that PostgreSQL and PGlite agree whatever their collation. */
function sortExpression(eb: ExpressionBuilder<Database, "orgs">, sort: OrgSortColumn) {
  switch (sort) {
    case "name":
      return sql`${eb.ref("orgs.name")} collate "C"`;
    case "primary_domain":
      return sql`(select d.domain from org_domains d where d.instance_id = orgs.instance_id and d.org_id = orgs.id and d.is_primary) collate "C"`;
    default:
      return eb.ref(`orgs.${sort}`);
  }
}

/** An organization of the instance by id or by any of its domains, for request contexts. */
export async function orgByIdOrDomain(db: Db, instanceId: string, by: { id: string } | { domain: string }) {
  if ("id" in by) {
    return db.selectFrom("orgs").select(["id", "state"]).where("instance_id", "=", instanceId).where("id", "=", by.id).executeTakeFirst();
  }
  return db
    .selectFrom("org_domains as d")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "d.instance_id").onRef("o.id", "=", "d.org_id"))
    .select(["o.id", "o.state"])
    .where("d.instance_id", "=", instanceId)
    .where("d.domain", "=", by.domain.toLowerCase())
    .executeTakeFirst();
}

/** An organization's name, if the instance has it. */
export async function orgName(db: Db, instanceId: string, id: string): Promise<string | undefined> {
  return (await db.selectFrom("orgs").select("name").where("instance_id", "=", instanceId).where("id", "=", id).executeTakeFirst())?.name;
}
