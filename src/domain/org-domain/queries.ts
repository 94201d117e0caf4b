import { sql, type ExpressionBuilder } from "kysely";
import type { Db } from "../../store/db.js";
import type { Database } from "../../store/schema.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { AGGREGATE as ORG_AGGREGATE } from "../org/model.js";
import { validatesOrgDomains } from "../settings/domain.js";
import { domainView } from "./model.js";

export type DomainFilter = { domain: { value: string; match: TextMatch } } | { primary: boolean } | { verified: boolean };

export type DomainSortColumn = "domain" | "created_at" | "is_primary" | "is_verified";

export interface DomainSearch {
  filters: DomainFilter[];
  sort: DomainSortColumn;
  page: Page;
  /** Only these organizations (an organization context, or what the caller may read); undefined: all. */
  within?: ReadonlySet<string>;
}

/** Filters are combined with AND; ties of the sort column are broken by the domain name. */
export async function searchDomains(db: Db, instanceId: string, search: DomainSearch) {
  let query = db.selectFrom("org_domains").where("instance_id", "=", instanceId);
  if (search.within) query = query.where("org_id", "in", [...search.within, ""]);
  for (const filter of search.filters) {
    if ("domain" in filter) query = query.where((eb) => textMatches(eb, eb.ref("domain"), filter.domain.match, filter.domain.value));
    else if ("primary" in filter) query = query.where("is_primary", "=", filter.primary);
    else query = query.where("is_verified", "=", filter.verified);
  }
  const found = await searchPage(
    db,
    ORG_AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy(sql`domain collate "C"`, direction),
    search.page,
  );
  return { ...found, rows: found.rows.map(domainView) };
}

function sortExpression(eb: ExpressionBuilder<Database, "org_domains">, sort: DomainSortColumn) {
  return sort === "domain" ? sql`${eb.ref("domain")} collate "C"` : eb.ref(sort);
}

/** The organization a domain belongs to, for authorization in its context. */
export async function orgOfDomain(db: Db, instanceId: string, domain: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("org_domains")
    .select("org_id")
    .where("instance_id", "=", instanceId)
    .where("domain", "=", domain.toLowerCase())
    .executeTakeFirst();
  return row?.org_id;
}

/**
 * The active organization a login domain (after a login name's "@") routes to. While the
 * domain settings ask for verification, unverified domains route no login.
 */
export async function activeOrgOfLoginDomain(db: Db, instanceId: string, domain: string): Promise<string | undefined> {
  const verifiedOnly = await validatesOrgDomains(db, instanceId);
  const row = await db
    .selectFrom("org_domains as d")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "d.instance_id").onRef("o.id", "=", "d.org_id"))
    .select("d.org_id")
    .where("d.instance_id", "=", instanceId)
    .where("o.state", "=", "active")
    .where((eb) => eb(eb.fn("lower", [eb.ref("d.domain")]), "=", domain.toLowerCase()))
    .$if(verifiedOnly, (q) => q.where((d) => d.or([d("d.is_verified", "=", true), d("d.is_primary", "=", true)])))
    .executeTakeFirst();
  return row?.org_id;
}
