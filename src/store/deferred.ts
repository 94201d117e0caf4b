import type { Compilable, CompiledQuery, QueryResult } from "kysely";
import type { Db } from "./db.js";

/** The statements deferStatement queued: the driver recognizes them by identity. */
const deferred = new WeakSet<CompiledQuery>();

/** Whether a statement was handed in by deferStatement. */
export function isDeferred(query: CompiledQuery): boolean {
  return deferred.has(query);
}

/**
 * Queues a statement of a transaction instead of running it: on PostgreSQL it goes to the
 * server with the transaction's next statement, or with its commit, in the same write and
 * the same round trip (pg/pg-driver.ts). For statements whose answer nobody reads, the
 * instance hold at the start of every write and the projection row inserted at its end: each
 * round trip saved is a system call and a wake-up of the server's backend on both sides,
 * about a tenth of a millisecond of CPU each on a small machine.
 *
 * Such a statement fails the transaction as any other: its error is thrown by the statement
 * or commit it went with, in its place, and a commit behind it is answered by a rollback. A
 * caller must therefore not depend on its having run before its next statement returns.
 * Outside a transaction, and on PGlite, it simply runs at once.
 */
export async function deferStatement(db: Db, query: Compilable<unknown> | CompiledQuery): Promise<void> {
  const compiled = "compile" in query ? query.compile() : query;
  deferred.add(compiled);
  await db.executeQuery(compiled);
}

/** The statements commitWith handed in. */
const lastOfTransaction = new WeakSet<CompiledQuery>();

/** Whether a statement was handed in by commitWith. */
export function isCommittedWith(query: CompiledQuery): boolean {
  return lastOfTransaction.has(query);
}

/**
 * Runs a transaction's last statement with its commit: on PostgreSQL the statements queued
 * before it, it and the commit go to the server in one write and are answered in one round
 * trip, where the commit would otherwise take one of its own after it. A write that reads
 * nothing before its end (its events queued by queueEvents, store/append.ts) then costs
 * a single round trip, and still reads this statement's answer.
 *
 * The transaction ends here, on both databases: its error (or one of a statement queued
 * before it) is this statement's, and a commit that fails fails it. Nothing may run in the
 * transaction after it; a statement that tries is refused (transactionEnded), and the
 * transaction's own commit or rollback afterwards is answered at once. On PGlite the commit
 * simply runs right after the statement. Outside a transaction it runs as any statement.
 */
export function commitWith<R>(db: Db, query: Compilable<R> | CompiledQuery): Promise<QueryResult<R>> {
  const compiled = "compile" in query ? query.compile() : query;
  lastOfTransaction.add(compiled);
  return db.executeQuery(compiled) as Promise<QueryResult<R>>;
}

/** What a statement gets that comes after the one its transaction was committed with. */
export function transactionEnded(): Error {
  return new Error("the transaction has ended: it was committed with its last statement (commitWith, store/deferred.ts)");
}
