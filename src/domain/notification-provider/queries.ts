import { sql, type ExpressionBuilder } from "kysely";
import type { Db } from "../../store/db.js";
import { AGGREGATES, nameOf, type ProviderFamily, type ProviderState, providerView, type ProviderView } from "./model.js";
import type { Database, NotificationProviderRow } from "../../store/schema.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../store/search.js";
import { notFound } from "../errors.js";

export async function providerRow(db: Db, instanceId: string, family: ProviderFamily, id: string): Promise<NotificationProviderRow> {
  const row = await db
    .selectFrom("notification_providers")
    .selectAll()
    .where("instance_id", "=", instanceId)
    .where("family", "=", family)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) throw notFound(`${nameOf(family)} ${id} not found`);
  return row;
}

export async function getProvider(db: Db, instanceId: string, family: ProviderFamily, id: string): Promise<ProviderView> {
  return providerView(await providerRow(db, instanceId, family, id));
}

/** The instance's active provider of the family, if any (the partial unique index finds it). */
export async function activeProvider(db: Db, instanceId: string, family: ProviderFamily): Promise<NotificationProviderRow | undefined> {
  return db
    .selectFrom("notification_providers")
    .selectAll()
    .where("instance_id", "=", instanceId)
    .where("family", "=", family)
    .where("state", "=", "active")
    .executeTakeFirst();
}

export type ProviderFilter = { ids: string[] } | { description: { value: string; match: TextMatch } } | { state: ProviderState };

export type ProviderSortColumn = "id" | "created_at" | "change_date" | "description";

export interface ProviderSearch {
  filters: ProviderFilter[];
  sort: ProviderSortColumn;
  page: Page;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchProviders(db: Db, instanceId: string, family: ProviderFamily, search: ProviderSearch) {
  let query = db.selectFrom("notification_providers").where("instance_id", "=", instanceId).where("family", "=", family);
  for (const filter of search.filters) {
    if ("ids" in filter) query = query.where((eb) => eb("id", "=", eb.fn.any(eb.val(filter.ids))));
    else if ("description" in filter) query = query.where((eb) => textMatches(eb, eb.ref("description"), filter.description.match, filter.description.value));
    else query = query.where("state", "=", filter.state);
  }
  const found = await searchPage(
    db,
    AGGREGATES[family],
    instanceId,
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy("id", direction),
    search.page,
  );
  return { ...found, rows: found.rows.map(providerView) };
}

/** Text sorts byte-wise, so that PostgreSQL and PGlite agree whatever their collation. */
function sortExpression(eb: ExpressionBuilder<Database, "notification_providers">, sort: ProviderSortColumn) {
  return sort === "description" ? sql`${eb.ref("description")} collate "C"` : eb.ref(sort);
}
