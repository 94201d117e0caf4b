import { sql, type ExpressionBuilder } from "kysely";
import type { Database } from "../../../store/schema.js";
import type { Db } from "../../../store/db.js";
import { prepared } from "../../../store/prepared.js";
import { searchPage, textMatches, type Page, type TextMatch } from "../../../store/search.js";
import { notFound } from "../../errors.js";
import { AGGREGATE, TARGET_VIEW_COLUMNS, targetView, type TargetView } from "./model.js";

const targetById = prepared((db, p: { instanceId: string; id: string }) =>
  db.selectFrom("targets").select(TARGET_VIEW_COLUMNS).where("instance_id", "=", p.instanceId).where("id", "=", p.id),
);

export async function getTarget(db: Db, instanceId: string, id: string): Promise<TargetView> {
  const [row] = await targetById(db, { instanceId, id });
  if (!row) throw notFound(`target ${id} not found`);
  return targetView(row);
}

export type TargetFilter = { name: { value: string; match: TextMatch } } | { ids: string[] };

export type TargetSortColumn = "id" | "created_at" | "change_date" | "name" | "target_type" | "url" | "timeout_ms" | "async" | "interrupt_on_error";

export interface TargetSearch {
  filters: TargetFilter[];
  sort: TargetSortColumn;
  page: Page;
}

/** Filters are combined with AND; ties of the sort column are broken by id. */
export async function searchTargets(db: Db, instanceId: string, search: TargetSearch) {
  let query = db.selectFrom("targets").where("instance_id", "=", instanceId);
  for (const filter of search.filters) {
    query =
      "name" in filter
        ? query.where((eb) => textMatches(eb, eb.ref("name"), filter.name.match, filter.name.value))
        : query.where((eb) => eb("id", "=", eb.fn.any(eb.val(filter.ids))));
  }
  const found = await searchPage(
    db,
    AGGREGATE,
    instanceId,
    query,
    (q, direction) => q.orderBy((eb) => sortExpression(eb, search.sort), direction).orderBy("id", direction),
    search.page,
    TARGET_VIEW_COLUMNS,
  );
  return { ...found, rows: found.rows.map(targetView) };
}

/** Text columns sort byte-wise, so that PostgreSQL and PGlite agree whatever their collation. */
function sortExpression(eb: ExpressionBuilder<Database, "targets">, sort: TargetSortColumn) {
  switch (sort) {
    case "name":
    case "url":
      return sql`${eb.ref(sort)} collate "C"`;
    case "async":
      return eb(eb.ref("execution_mode"), "=", "async");
    case "interrupt_on_error":
      return eb(eb.ref("execution_mode"), "=", "interrupt_on_error");
    default:
      return eb.ref(sort);
  }
}
