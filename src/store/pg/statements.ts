import type { QueryResult } from "kysely";
import type pg from "pg";
import { StatementQuery } from "./query.js";

/**
 * One statement queued on the client. A query object of our own (query.ts) rather than
 * `client.query(config)`, which copies every config object through its property descriptors
 * first (pg 8.23), about 4 µs a statement.
 */
export function submit<R extends object>(
  client: pg.ClientBase,
  text: string,
  values: unknown[] | undefined,
  name: string | undefined,
): Promise<pg.QueryResult<R>> {
  return new Promise((resolve, reject) => {
    client.query(new StatementQuery<R>(text, values, name || undefined, (error, result) => (error ? reject(error) : resolve(result))));
  });
}

const AFFECTING = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/** pg's answer as Kysely takes it. */
export function queryResult<R>(result: pg.QueryResult<R & object>): QueryResult<R> {
  return {
    rows: result.rows ?? [],
    ...(AFFECTING.has(result.command) && { numAffectedRows: BigInt(result.rowCount ?? 0) }),
  };
}

/** PostgreSQL refusing a prepared statement whose result columns changed since it was prepared. */
export function isStalePlan(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "0A000" && /cached plan must not change result type/.test(String((error as Error).message));
}

/** A named statement the connection does not know: its Parse failed, in a pipeline of several of that name. */
export function isMissingStatement(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "26000";
}

/**
 * Errors the server reported for one statement (they carry a SQLSTATE and leave the
 * connection usable); anything else is a broken connection or a read timeout.
 */
export function isStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08") && !code.startsWith("57P");
}
