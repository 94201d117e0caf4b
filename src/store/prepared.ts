import { CompiledQuery, type Compilable, type Kysely } from "kysely";
import { commitWith, deferStatement } from "./deferred.js";
import type { Database } from "./schema.js";

/** Stands in for a parameter while the query is compiled; never a value a caller sends. */
const SLOT = "\u0000slot:";

/** Statement names by SQL text, for the pg driver (pg/pg-driver.ts); only prepared queries get one. */
const names = new Map<string, string>();

/** The server-side statement name of a prepared query's SQL, if it is one. */
export function statementName(sql: string): string | undefined {
  return names.get(sql);
}

type Scalar = string | number | boolean | Date | null;

/**
 * A query built and compiled once, then run with new values: the hot reads pay neither
 * Kysely's building (an immutable tree per call) nor its compilation, about 15 µs for a
 * lookup by key and 60 µs for a user with its view's subqueries; on PostgreSQL the statement
 * is also prepared once per connection (a named statement), so the server parses and plans
 * it once. `build` gets stand-ins for the parameters, which may be used only as values
 * (not in `in` lists, nor as identifiers); compiling checks that each appears as a parameter.
 */
export function prepared<P extends Record<string, Scalar>, R>(build: (db: Kysely<Database>, params: P) => Compilable<R>) {
  let compiled: { sql: string; slots: (keyof P | { value: unknown })[] } | undefined;
  const compile = (db: Kysely<Database>) => {
    const stand = new Proxy({} as P, { get: (_, key) => `${SLOT}${String(key)}` });
    const query = build(db, stand).compile();
    if (query.sql.includes(SLOT)) throw new Error(`a prepared query took a parameter into its SQL: ${query.sql}`);
    const slots = query.parameters.map((p) => (typeof p === "string" && p.startsWith(SLOT) ? (p.slice(SLOT.length) as keyof P) : { value: p }));
    if (!names.has(query.sql)) names.set(query.sql, `prepared_${names.size + 1}`);
    return { sql: query.sql, slots };
  };
  const statement = (db: Kysely<Database>, params: P) => {
    compiled ??= compile(db);
    const values = compiled.slots.map((slot) => (typeof slot === "object" ? slot.value : params[slot]));
    return CompiledQuery.raw(compiled.sql, values);
  };
  const run = async (db: Kysely<Database>, params: P): Promise<R[]> => (await db.executeQuery<R>(statement(db, params))).rows;
  /** Queued in the transaction rather than run (store/deferred.ts): for statements whose answer nobody reads. Outside a transaction it runs at once. */
  run.defer = (db: Kysely<Database>, params: P): Promise<void> => deferStatement(db, statement(db, params));
  /** The transaction's last statement, sent with its commit (store/deferred.ts). */
  run.withCommit = async (db: Kysely<Database>, params: P): Promise<R[]> => (await commitWith<R>(db, statement(db, params))).rows;
  return run;
}
