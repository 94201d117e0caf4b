import type { CompiledQuery, QueryResult } from "kysely";
import pg from "pg";
import { abortReason, boundedWait } from "../abort.js";
import { StatementTransactions, type SignalConnection, type SignalDriver } from "../scoped.js";
import { isCommittedWith, isDeferred } from "../deferred.js";
import { COMMIT, isBegin, isEnd, isRollback, TransactionState } from "../transaction-state.js";
import { CANCEL_GRACE_MS, cancelStatement } from "./cancel.js";
import { isStalePlan, isStatementError, queryResult, submit } from "./statements.js";
import { SharedConnections, type SharingLimits } from "./shared-connections.js";
import { StatementNames } from "./statement-names.js";

/**
 * Kysely's driver for pg, with the faults of a real network handled in one place: a
 * connection is had within the connect timeout or the request's signal; a statement whose
 * request is aborted is abandoned at once and, if still running after a short grace,
 * cancelled on the server (so that its locks go); a connection that failed, was cancelled or
 * still holds an open transaction is discarded rather than reused. (Each statement is also
 * bounded by the pool's query_timeout, set where the pool is made.)
 */
export class PgDriver extends StatementTransactions implements SignalDriver {
  private readonly connections = new WeakMap<pg.PoolClient, PgConnection>();

  private readonly names: StatementNames;

  private readonly shared: SharedConnections | undefined;

  /** `preparedMax`: how many statement texts this process prepares on the server (statement-names.ts); `sharing`: shared-connections.ts. */
  constructor(
    private readonly pool: pg.Pool,
    preparedMax: number,
    sharing: SharingLimits,
  ) {
    super();
    this.names = new StatementNames(preparedMax);
    this.shared = sharing.connections > 0 ? new SharedConnections(pool, this.names, sharing, (query, signal) => this.runOwn(query, signal)) : undefined;
  }

  runShared<R>(query: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> | undefined {
    return this.shared?.run<R>(query, signal);
  }

  private async runOwn<R>(query: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> {
    const connection = await this.acquireFor(signal);
    try {
      return await connection.executeQuery<R>(query, signal);
    } finally {
      await this.releaseConnection(connection);
    }
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<PgConnection> {
    return this.acquireFor(undefined);
  }

  async acquireFor(signal: AbortSignal | undefined): Promise<PgConnection> {
    // pg-pool bounds the wait itself (connectionTimeoutMillis, the same limit); the signal ends it sooner.
    if (signal?.aborted) throw abortReason(signal);
    const client = await boundedWait(this.pool.connect(), { signal, onLate: (late) => late.release() });
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PgConnection(client, this.names);
      this.connections.set(client, connection);
    }
    connection.checkedOut();
    return connection;
  }

  /** Returns at once; an abandoned statement is settled (or cancelled) before the pool gets the connection back. */
  async releaseConnection(connection: PgConnection): Promise<void> {
    void connection.release();
  }

  async destroy(): Promise<void> {
    this.shared?.close();
    await this.pool.end();
  }
}

class PgConnection implements SignalConnection {
  private readonly transaction = new TransactionState();
  /** Why the connection must not go back to the pool, once it must not. */
  private discard: Error | undefined;
  /** A statement still running for a request that has already given up on it. */
  private abandoned: Promise<unknown> | undefined;
  /**
   * Statements of the transaction not sent yet: its `start transaction`, and the ones queued by
   * deferStatement (store/deferred.ts). They go on the wire right before the next statement
   * (or the commit), all in one write and answered in one round trip (the pool's clients
   * pipeline), instead of a round trip each. Every write begins so.
   */
  private pending: CompiledQuery[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    private readonly names: StatementNames,
  ) {}

  checkedOut(): void {
    this.discard = undefined;
    this.abandoned = undefined;
    this.pending = [];
    this.transaction.reset();
  }

  async executeQuery<R>(query: CompiledQuery, signal?: AbortSignal): Promise<QueryResult<R>> {
    if (this.transaction.answeredByEarlyEnd(query)) return { rows: [] };
    if (isBegin(query)) {
      this.pending = [query];
      return { rows: [] };
    }
    const beginPending = this.pending.length > 0 && isBegin(this.pending[0]!);
    if (isDeferred(query) && (beginPending || this.transaction.open)) {
      this.pending.push(query);
      return { rows: [] };
    }
    if (isRollback(query)) {
      // What was never sent needs no undoing; with the begin unsent, nothing is to end.
      this.pending = [];
      if (beginPending || !this.transaction.open) return { rows: [] };
    } else if (beginPending && this.pending.length === 1 && isEnd(query)) {
      // A transaction that ran nothing: nothing was sent, nothing is to end.
      this.pending = [];
      return { rows: [] };
    }
    const ending = isCommittedWith(query) && (beginPending || this.transaction.open);
    try {
      return await this.run<R>(query, signal, this.names.nameOf(query.sql, query.parameters.length), ending);
    } catch (error) {
      // A prepared statement whose table changed shape since (`select *` after a migration
      // of a newer version, during a rolling upgrade): this connection's statements go with
      // it, and outside a transaction the statement runs again unprepared at once.
      if (!isStalePlan(error)) throw error;
      this.discard ??= error as Error;
      if (this.transaction.open || ending) throw error;
      return this.run<R>(query, signal, undefined, false);
    }
  }

  /** `ending`: the commit goes right after the statement (commitWith), and the transaction ends with it. */
  private async run<R>(query: CompiledQuery, signal: AbortSignal | undefined, name: string | undefined, ending: boolean): Promise<QueryResult<R>> {
    const guarded = signal && !isRollback(query) ? signal : undefined;
    if (guarded?.aborted) throw abortReason(guarded);
    // After an abandoned statement nothing more is sent: the connection is settled and, if
    // a transaction is open, discarded (the server then rolls it back).
    if (this.abandoned) throw new Error("the connection's request was aborted");
    const before = this.pending;
    this.pending = [];
    // Queued at once, all written before any is answered (pipelining), and in one write:
    // every write to the server's socket costs a system call and a wake-up of its backend.
    const socket = before.length > 0 || ending ? socketOf(this.client) : undefined;
    socket?.cork();
    let sent: Promise<unknown>[];
    let statement: Promise<pg.QueryResult<R & object>>;
    let commit: Promise<unknown> | undefined;
    try {
      sent = before.map((queued) => submit(this.client, queued.sql, queued.parameters as unknown[], this.names.nameOf(queued.sql, queued.parameters.length)));
      statement = submit<R & object>(this.client, query.sql, query.parameters as unknown[], name);
      if (ending) commit = submit(this.client, COMMIT.sql, [], undefined);
    } finally {
      socket?.uncork();
    }
    const answered = before.length > 0 ? this.answered(before, sent, statement) : statement;
    const running = commit ? committedAfter(answered, commit) : answered;
    if (ending) this.transaction.endedEarly = true;
    let result;
    try {
      result = guarded ? await boundedWait(running, { signal: guarded }) : await running;
    } catch (error) {
      if (guarded?.aborted) {
        // The statement runs on; release() settles or cancels it before the pool gets the connection.
        this.abandoned = running;
        throw abortReason(guarded);
      }
      const statementError = isStatementError(error);
      if (!statementError) this.discard ??= error as Error;
      this.transaction.ran(query, statementError);
      if (ending && statementError) this.transaction.ran(COMMIT, true);
      throw error;
    }
    this.transaction.ran(query, false);
    if (ending) this.transaction.ran(COMMIT, false);
    return queryResult(result);
  }

  /**
   * The statement's answer once those sent before it were answered, in order. The first of
   * them that failed fails it in its place: the server then skipped or refused what came after
   * (a failed transaction answers a commit with a rollback, not with an error).
   */
  private async answered<R>(before: CompiledQuery[], sent: Promise<unknown>[], statement: Promise<R>): Promise<R> {
    let failure: { error: unknown } | undefined;
    for (let i = 0; i < sent.length; i++) {
      try {
        await sent[i];
        if (isBegin(before[i]!)) this.transaction.ran(before[i]!, false);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (!failure) return statement;
    await statement.catch(() => {});
    throw failure.error;
  }

  // Kysely's interface; nothing here streams.
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not used");
  }

  async release(): Promise<void> {
    if (this.abandoned) await this.settleAbandoned(this.abandoned);
    if (this.transaction.open) this.discard ??= new Error("released inside a transaction");
    this.client.release(this.discard);
  }

  /**
   * Gives an abandoned statement a moment to end by itself; then asks the server to cancel it
   * (a protocol cancel on a connection of its own: it needs no pooled connection, which a
   * stalled database may not have free) and discards this connection, so that a cancel
   * landing late never hits a later request's statement.
   */
  private async settleAbandoned(running: Promise<unknown>): Promise<void> {
    const settled = running.then(
      () => true,
      () => true,
    );
    const ended = await Promise.race([settled, new Promise<false>((resolve) => setTimeout(resolve, CANCEL_GRACE_MS, false))]);
    if (ended) return;
    this.discard ??= new Error("statement cancelled: its request was aborted");
    cancelStatement(this.client);
    await settled;
  }
}

/**
 * A statement's answer once the commit sent right after it was answered too: the statement's
 * error if it failed (the server then answered the commit with a rollback), else the commit's
 * own, if it failed.
 */
async function committedAfter<R>(statement: Promise<R>, commit: Promise<unknown>): Promise<R> {
  let result: R;
  try {
    result = await statement;
  } catch (error) {
    await commit.catch(() => {});
    throw error;
  }
  await commit;
  return result;
}

/**
 * The client's socket, where pg exposes it (its `connection.stream`; absent on pg-native):
 * queued statements are corked together on it.
 */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?: unknown; uncork?: unknown } } }).connection?.stream;
  return typeof stream?.cork === "function" && typeof stream.uncork === "function" ? (stream as { cork(): void; uncork(): void }) : undefined;
}
