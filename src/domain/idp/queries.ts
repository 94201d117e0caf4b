import { sql, type ExpressionBuilder, type SqlBool, type Expression } from "kysely";
import type { Db } from "../../store/db.js";
import { pageState, projectionStateColumns } from "../../store/projection-state.js";
import type { Database } from "../../store/schema.js";
import { textMatches, type Page, type TextMatch } from "../../store/search.js";
import { contextColumns, type ContextRef } from "../context.js";
import { notFound } from "../errors.js";
import { AGGREGATE, IDP_VIEW_COLUMNS, idpView, ownerOfIdp, type EffectiveState, type IdpView, type IdpViewRow, type PoliciesAlong } from "./model.js";

/** The context owning a provider, wherever it is; undefined when there is none. */
export async function idpOwner(db: Db, id: string): Promise<ContextRef | undefined> {
  const row = await db.selectFrom("idps").select(["instance_id", "org_id"]).where("id", "=", id).executeTakeFirst();
  return row && ownerOfIdp(row);
}

type Joined = Database & { p_org: Database["idp_state_policies"]; p_inst: Database["idp_state_policies"] };

/**
 * The providers with the policies of the asked context and its instance joined on. Policy
 * rows exist only below a provider's owner, so the joins find exactly the policies that
 * stand between the asked context and the owner.
 */
function withPolicies(db: Db, asked: ContextRef) {
  const at = contextColumns(asked);
  return db
    .selectFrom("idps")
    .leftJoin("idp_state_policies as p_org", (j) =>
      j
        .onRef("p_org.idp_id", "=", "idps.id")
        .on("p_org.instance_id", "=", at.instance_id)
        .on("p_org.org_id", "=", at.org_id)
        .on(sql.lit(asked.type === "org")),
    )
    .leftJoin("idp_state_policies as p_inst", (j) =>
      j
        .onRef("p_inst.idp_id", "=", "idps.id")
        .on("p_inst.instance_id", "=", at.instance_id)
        .on("p_inst.org_id", "=", "")
        .on(sql.lit(asked.type !== "system")),
    )
    .select(IDP_VIEW_COLUMNS.map((column) => `idps.${column}` as const))
    .select(["p_org.policy as org_policy", "p_inst.policy as instance_policy"]);
}

type WithPolicies = IdpViewRow & { org_policy: PoliciesAlong["org"]; instance_policy: PoliciesAlong["instance"] };

function viewOf(row: WithPolicies, asked: ContextRef): IdpView {
  return idpView(row, asked, { org: row.org_policy, instance: row.instance_policy });
}

/** One provider seen from a context; the authorization established that it is visible there. */
export async function getIdp(db: Db, id: string, asked: ContextRef): Promise<IdpView> {
  const row = (await withPolicies(db, asked).where("idps.id", "=", id).executeTakeFirst()) as WithPolicies | undefined;
  if (!row) throw notFound(`identity provider ${id} not found`);
  return viewOf(row, asked);
}

export type IdpFilter = { id: string } | { name: { value: string; match: TextMatch } } | { state: EffectiveState };

export interface IdpSearch {
  filters: IdpFilter[];
  sort: "created_at" | "name";
  page: Page;
  /** Organizations whose own providers the caller may see; undefined: all in scope. */
  visibleOrgs: ReadonlySet<string> | undefined;
}

/** What a search from a context covers: its own providers, all it inherits, all of its children. */
function inScope(eb: ExpressionBuilder<Joined, "idps">, asked: ContextRef, visibleOrgs: ReadonlySet<string> | undefined): Expression<SqlBool> {
  if (asked.type === "system") return eb.lit(true);
  const inherited = eb("idps.instance_id", "=", "");
  if (asked.type === "org") {
    return eb.or([inherited, eb.and([eb("idps.instance_id", "=", asked.instanceId), eb("idps.org_id", "in", ["", asked.orgId])])]);
  }
  const orgs = visibleOrgs === undefined ? eb.lit(true) : eb.or([eb("idps.org_id", "=", ""), eb("idps.org_id", "=", eb.fn.any(eb.val([...visibleOrgs])))]);
  return eb.or([inherited, eb.and([eb("idps.instance_id", "=", asked.instanceId), orgs])]);
}

/** The effective state in the asked context, in SQL: the nearest policy that is not INHERIT. */
function effectiveState(eb: ExpressionBuilder<Joined, "idps" | "p_org" | "p_inst">) {
  return sql<EffectiveState>`case when coalesce(${eb.ref("p_org.policy")}, ${eb.ref("p_inst.policy")}, ${eb.ref("idps.state_policy")}) = 'deactivate' then 'inactive' else 'active' end`;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchIdps(db: Db, asked: ContextRef, search: IdpSearch) {
  let query = withPolicies(db, asked).where((eb) => inScope(eb as never, asked, search.visibleOrgs));
  for (const filter of search.filters) {
    if ("id" in filter) query = query.where("idps.id", "=", filter.id);
    else if ("name" in filter) query = query.where((eb) => textMatches(eb, eb.ref("idps.name"), filter.name.match, filter.name.value));
    else query = query.where((eb) => eb(effectiveState(eb as never), "=", filter.state));
  }
  const direction = search.page.asc ? "asc" : "desc";
  const sorted = search.sort === "name" ? query.orderBy(sql`idps.name collate "C"`, direction) : query.orderBy("idps.created_at", direction);
  const instanceId = contextColumns(asked).instance_id;
  // The projection's state rides on the page's statement, as in store/search.ts.
  const rows = await sorted
    .orderBy("idps.id", direction)
    .select((eb) => eb.fn.countAll<number>().over().as("total"))
    .select(projectionStateColumns(instanceId, AGGREGATE))
    .limit(search.page.limit)
    .offset(search.page.offset)
    .execute();
  let total = rows.length > 0 ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && search.page.offset > 0) {
    const counted = await query
      .clearSelect()
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    total = Number(counted.n);
  }
  const state = await pageState(db, rows[0], instanceId, AGGREGATE);
  return { rows: (rows as unknown as WithPolicies[]).map((row) => viewOf(row, asked)), total, state };
}

/** A provider visible in the instance (the system's or the instance's own) with its sealed client secret: for calling it, never for showing. */
export function idpWithSecret(db: Db, instanceId: string, id: string) {
  return db
    .selectFrom("idps")
    .select(["id", "type", "name", "config", "client_secret"])
    .where("id", "=", id)
    .where("instance_id", "in", ["", instanceId])
    .executeTakeFirst();
}
