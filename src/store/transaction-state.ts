import { CompiledQuery } from "kysely";
import { transactionEnded } from "./deferred.js";

/**
 * Whether a connection is inside a transaction, from the statements our drivers issue for
 * Kysely (StatementTransactions in scoped.ts): a connection must never go back to the pool,
 * or to the next PGlite caller, with a transaction still open.
 */
export class TransactionState {
  open = false;
  /** The transaction was ended by the statement commitWith sent (store/deferred.ts). */
  endedEarly = false;

  /** A connection handed to its next user. */
  reset(): void {
    this.open = false;
    this.endedEarly = false;
  }

  /** After a statement ran (`failed`: the server answered it with an error). */
  ran(query: CompiledQuery, failed: boolean): void {
    if (isBegin(query)) this.open = !failed;
    // PostgreSQL ends the transaction on a failed commit too.
    else if (isEnd(query)) this.open = false;
  }

  /**
   * Whether `query` is answered at once because commitWith already ended the transaction:
   * Kysely ends every transaction itself, with a commit (or, after an error of the caller's
   * own, a rollback). Any other statement is refused.
   */
  answeredByEarlyEnd(query: CompiledQuery): boolean {
    if (!this.endedEarly) return false;
    if (isEnd(query)) return true;
    throw transactionEnded();
  }
}

/** The statements that end a transaction, as StatementTransactions and the drivers send them. */
export const COMMIT = CompiledQuery.raw("commit");
export const ROLLBACK = CompiledQuery.raw("rollback");

/** The statements of StatementTransactions (scoped.ts) that begin and end a transaction. */
export const isBegin = (query: CompiledQuery) => query.sql.startsWith("start transaction");
export const isEnd = (query: CompiledQuery) => query.sql === "commit" || query.sql === "rollback";

/** A rollback always runs, aborted request or not: it is what leaves the connection clean. */
export const isRollback = (query: CompiledQuery) => query.sql === "rollback";
