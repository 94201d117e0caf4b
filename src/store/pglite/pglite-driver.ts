import type { PGlite } from "@electric-sql/pglite";
import { CompiledQuery, type QueryResult } from "kysely";
import { abortReason, boundedWait } from "../abort.js";
import { isCommittedWith } from "../deferred.js";
import { COMMIT, isRollback, ROLLBACK, TransactionState } from "../transaction-state.js";
import { StatementTransactions, type SignalConnection, type SignalDriver } from "../scoped.js";
import { PGliteStatements } from "./statements.js";

/**
 * Kysely's driver for embedded PGlite. Kysely ships a PGlite dialect from 0.29 on, which
 * needs Node 22; this one follows the same structure. PGlite is a single connection, so the
 * driver hands it out to one holder at a time and queues the others (transactions stay
 * isolated). `waitTimeoutMs` bounds how long a caller queues (PGlite has no statement_timeout
 * of its own); the request's signal ends the wait sooner. A running statement cannot be
 * stopped: it runs inside this process, to its end.
 */
export class PGliteDriver extends StatementTransactions implements SignalDriver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  /** Callers that asked for the connection and have not released it, the holder included. */
  holders = 0;
  get waiting() {
    return Math.max(0, this.holders - 1);
  }

  constructor(
    pglite: PGlite,
    private readonly waitTimeoutMs: number,
    /** Statement texts prepared at most (PLATFORM_DB_PREPARED_STATEMENTS_MAX, as on PostgreSQL). */
    preparedMax: number,
  ) {
    super();
    this.connection = new PGliteConnection(new PGliteStatements(pglite, preparedMax));
  }

  async init(): Promise<void> {}

  /** The one connection as a pool of one, for metrics. */
  stats() {
    return { inUse: this.holders > 0 ? 1 : 0, idle: this.holders > 0 ? 0 : 1, waiting: this.waiting };
  }

  acquireConnection(): Promise<SignalConnection> {
    return this.acquireFor(undefined);
  }

  /**
   * Queues for the connection. A caller that gives up keeps its place in the chain and
   * passes the connection straight on when its turn comes, so the queue never breaks.
   */
  async acquireFor(signal: AbortSignal | undefined): Promise<SignalConnection> {
    let release!: () => void;
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    this.holders++;
    const handOver = () => {
      this.holders--;
      release();
    };
    await boundedWait(previous, {
      signal,
      timeoutMs: this.waitTimeoutMs,
      timeoutError: () => new ConnectionWaitTimeout(this.waitTimeoutMs),
    }).catch((error: unknown) => {
      void previous.then(handOver);
      throw error;
    });
    this.connection.handOver = handOver;
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    await this.connection.release();
  }

  async destroy(): Promise<void> {
    await this.queue;
  }
}

/** The embedded database was busy with other work for longer than a statement may take. */
class ConnectionWaitTimeout extends Error {
  override name = "ConnectionWaitTimeout";
  /** What PostgreSQL says when a statement_timeout fires: the same fault, the same answer. */
  readonly code = "57014";
  constructor(ms: number) {
    super(`the embedded database was busy for ${ms} ms`);
  }
}

class PGliteConnection implements SignalConnection {
  /** Passes the connection to the next caller in the queue. */
  handOver: () => void = () => {};
  private readonly transaction = new TransactionState();

  constructor(private readonly statements: PGliteStatements) {}

  /** A statement does not start once its request is aborted; a rollback always does. */
  async executeQuery<R>(compiled: CompiledQuery, signal?: AbortSignal): Promise<QueryResult<R>> {
    if (this.transaction.answeredByEarlyEnd(compiled)) return { rows: [] };
    if (!isCommittedWith(compiled) || !this.transaction.open) return this.run<R>(compiled, signal);
    // The transaction ends with this statement, as on PostgreSQL (where the commit goes in the statement's own write).
    this.transaction.endedEarly = true;
    let result;
    try {
      result = await this.run<R>(compiled, signal);
    } catch (error) {
      // There the commit behind a failed statement answers a rollback. Should even that fail
      // here, release() rolls back again before the next caller; the statement's error stands.
      await this.run(ROLLBACK, undefined).catch(() => {});
      throw error;
    }
    await this.run(COMMIT, undefined);
    return result;
  }

  private async run<R>(compiled: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> {
    if (signal?.aborted && !isRollback(compiled)) throw abortReason(signal);
    let result;
    try {
      result = await this.statements.run<R>(compiled.sql, compiled.parameters);
    } catch (error) {
      this.transaction.ran(compiled, true);
      throw error;
    }
    this.transaction.ran(compiled, false);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  /** The next caller never inherits an open transaction: one left open is rolled back first. */
  async release(): Promise<void> {
    try {
      if (this.transaction.open) await this.run(ROLLBACK, undefined);
    } finally {
      this.transaction.reset();
      this.handOver();
    }
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not supported on PGlite");
  }
}
