import type { CompiledQuery } from "kysely";

/**
 * Whether a connection is inside a transaction, from the statements our drivers issue for
 * Kysely (StatementTransactions in scoped.ts): a connection must never go back to the pool,
 * or to the next PGlite caller, with a transaction still open.
 */
export class TransactionState {
  open = false;

  /** After a statement ran (`failed`: the server answered it with an error). */
  ran(query: CompiledQuery, failed: boolean): void {
    if (isBegin(query)) this.open = !failed;
    // PostgreSQL ends the transaction on a failed commit too.
    else if (isEnd(query)) this.open = false;
  }
}

/** The statements of StatementTransactions (scoped.ts) that begin and end a transaction. */
export const isBegin = (query: CompiledQuery) => query.sql.startsWith("start transaction");
export const isEnd = (query: CompiledQuery) => query.sql === "commit" || query.sql === "rollback";

/** A rollback always runs, aborted request or not: it is what leaves the connection clean. */
export const isRollback = (query: CompiledQuery) => query.sql === "rollback";
