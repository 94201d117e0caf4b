import type { ExpressionBuilder, Expression, SqlBool } from "kysely";

export type TextMatch =
  | "equals"
  | "equals_ignore_case"
  | "starts_with"
  | "starts_with_ignore_case"
  | "contains"
  | "contains_ignore_case"
  | "ends_with"
  | "ends_with_ignore_case";

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

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** The page a search asks for; validation has rejected limits above MAX_LIMIT already. */
export function page(query: { offset: bigint | number; limit: number; asc: boolean } | undefined): Page {
  return {
    offset: Number(query?.offset ?? 0),
    limit: query?.limit ? Math.min(query.limit, MAX_LIMIT) : DEFAULT_LIMIT,
    asc: query?.asc ?? false,
  };
}

export interface Found<T> {
  rows: T[];
  total: number;
}

/** Rows carry `total` from `count(*) over ()`; past the last page a count is asked separately. */
export async function withTotal<T extends { total: number }>(
  rows: T[],
  count: () => Promise<number>,
  offset: number,
): Promise<Found<T>> {
  if (rows.length > 0) return { rows, total: rows[0]!.total };
  return { rows, total: offset > 0 ? await count() : 0 };
}
