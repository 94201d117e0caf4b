import type { Expression, ExpressionBuilder, Selectable, SelectQueryBuilder, SqlBool } from "kysely";
import type { Db } from "./db.js";
import { pageState, projectionStateColumns, type ProjectionState, type StateColumns } from "./projection-state.js";
import type { Database } from "./schema.js";

export type TextMatch =
  "equals" | "equals_ignore_case" | "starts_with" | "starts_with_ignore_case" | "contains" | "contains_ignore_case" | "ends_with" | "ends_with_ignore_case";

/** LIKE patterns treat %, _ and \ specially; a filter value never should. */
function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A text filter on one column, as every search of every resource offers it. */
export function textMatches<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: Expression<string>,
  match: TextMatch,
  value: string,
): Expression<SqlBool> {
  const ignoreCase = match.endsWith("_ignore_case");
  const kind = match.replace("_ignore_case", "");
  if (kind === "equals") {
    // Both sides through the database's lower(): JavaScript folds some characters differently.
    return ignoreCase ? eb(eb.fn("lower", [column]), "=", eb.fn("lower", [eb.val(value)])) : eb(column, "=", value);
  }
  const v = escapeLike(value);
  const pattern = kind === "starts_with" ? `${v}%` : kind === "ends_with" ? `%${v}` : `%${v}%`;
  return eb(column, ignoreCase ? "ilike" : "like", pattern);
}

export interface Page {
  offset: number;
  limit: number;
  asc: boolean;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** The page a search asks for; validation has rejected limits above MAX_LIMIT already. */
export function page(query: { offset: bigint | number; limit: number; asc: boolean } | undefined): Page {
  return {
    offset: Number(query?.offset ?? 0),
    limit: query?.limit ? Math.min(query.limit, MAX_LIMIT) : DEFAULT_LIMIT,
    asc: query?.asc ?? false,
  };
}

export interface Found<Row> {
  rows: Row[];
  total: number;
  state: ProjectionState;
}

/**
 * One page of a filtered projection, with the total of all matches and the projection's
 * state, in one statement: the total rides on the rows (`count(*) over ()`) and so does the
 * state of an instance-level projection (projectionStateColumns). Past the last page, where
 * no row carries them, they are read separately.
 */
export async function searchPage<TB extends keyof Database, C extends ColumnOf<TB> = ColumnOf<TB>>(
  db: Db,
  aggregateType: string,
  /** The instance whose events the projection counts; for a system-level one, its state. */
  scope: string | (() => Promise<ProjectionState>),
  filtered: SelectQueryBuilder<Database, TB, object>,
  order: (query: SelectQueryBuilder<Database, TB, object>, direction: "asc" | "desc") => SelectQueryBuilder<Database, TB, object>,
  page: Page,
  /** The columns the caller's view reads; every column unless told. A hundred rows decode only these. */
  columns?: readonly C[],
): Promise<Found<Pick<Selectable<Database[TB]>, C>>> {
  const ordered = order(filtered, page.asc ? "asc" : "desc");
  // Typed as selectAll()'s: PageRow fixes the rows' shape below either way.
  const paged = (columns ? (ordered.select(columns as never) as unknown as ReturnType<typeof ordered.selectAll>) : ordered.selectAll())
    .select((eb) => eb.fn.countAll<number>().over().as("total"))
    .limit(page.limit)
    .offset(page.offset);
  let rows: PageRow<TB>[];
  let state: ProjectionState;
  if (typeof scope === "string") {
    // The state's columns stay on the rows: every caller maps rows to views field by field.
    rows = (await paged.select(projectionStateColumns(scope, aggregateType)).execute()) as PageRow<TB>[];
    state = await pageState(db, rows[0], scope, aggregateType);
  } else {
    // A system-level projection's state is a query of its own; both run at once.
    [rows, state] = await Promise.all([paged.execute() as Promise<PageRow<TB>[]>, scope()]);
  }
  if (rows.length > 0) return { rows, total: rows[0]!.total, state };
  if (page.offset === 0) return { rows, total: 0, state };
  const counted = await filtered.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { rows, total: Number((counted as { n: number }).n), state };
}

type ColumnOf<TB extends keyof Database> = keyof Selectable<Database[TB]> & string;
// Kysely cannot see what selectAll() or a column list on a generic table yields; the shape is fixed here once.
type PageRow<TB extends keyof Database> = Selectable<Database[TB]> & StateColumns & { total: number };
