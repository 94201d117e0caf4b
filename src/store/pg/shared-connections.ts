import type { CompiledQuery, QueryResult } from "kysely";
import type pg from "pg";
import { abortReason, boundedWait } from "../abort.js";
import { cancelStatement } from "./cancel.js";
import type { StatementNames } from "./statement-names.js";
import { isStalePlan, isStatementError, queryResult, submit } from "./statements.js";

export interface SharingLimits {
  /** Connections held for statements outside transactions; 0 turns sharing off. */
  connections: number;
  /** Statements in flight on one of them at most; past that a statement takes a pooled connection of its own. */
  queueMax: number;
}

/** An abandoned statement still running after this is cancelled, as on a connection of its own (pg-driver.ts). */
const ABANDONED_GRACE_MS = 50;

interface Shared {
  client: pg.PoolClient;
  /** Statements sent and not yet answered, in the order the server runs them. */
  inFlight: Promise<unknown>[];
  /** Taken no more statements; released (destroyed unless healthy) once none is in flight. */
  retired?: { reason: Error | undefined };
  released?: true;
}

/**
 * A request's statement outside a transaction (nearly every read, and the few single-statement
 * writes) runs on one of a few connections that every request shares, instead of checking one out of
 * the pool: statements that requests send in the same turn of the event loop leave in one
 * write and come back in one read (pg's pipeline mode; PostgreSQL answers each in order, each
 * ended by its own Sync, so one's error is its own). A pooled connection per statement costs
 * a write and a read of its own, and on the two-CPU machines measured that, with the
 * checkout, was the largest part of a GetTarget's CPU (docs/benchmarks.md, issue 21 step 7).
 *
 * What sharing changes, and how it is bounded:
 * - Nothing may rely on session state between statements outside a transaction (none does:
 *   `set`, session advisory locks and LISTEN are not used on request connections).
 * - A statement queues behind the others in flight on its connection: the least busy one is
 *   taken, and with `queueMax` in flight on each the statement takes a pooled connection.
 * - A statement whose request is aborted is abandoned: its caller hears of the abort at once.
 *   If it still runs after a short grace, its connection takes no new statements and is
 *   closed once the ones in flight are answered, and it is cancelled if it is the one the
 *   server runs (#abandoned).
 * - A connection that fails (a broken socket, a read timeout, a stale prepared plan) is
 *   retired the same way and replaced by the next statement; its statements in flight fail
 *   as they would on a connection of their own.
 */
export class SharedConnections {
  readonly #open: Shared[] = [];
  #opening = 0;
  #closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly names: StatementNames,
    private readonly limits: SharingLimits,
  ) {}

  /** The statement's answer from a shared connection, or undefined when none has room (the caller checks one out). */
  run<R>(query: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> | undefined {
    const shared = this.#pick();
    return shared && this.#run<R>(shared, query, signal);
  }

  /** Hands the connections back to the pool (for its end); statements in flight are answered first. */
  close(): void {
    this.#closed = true;
    for (const shared of [...this.#open]) this.#retire(shared, undefined);
  }

  #pick(): Shared | undefined {
    if (this.#closed) return undefined;
    if (this.#open.length + this.#opening < this.limits.connections) this.#openOne();
    let best: Shared | undefined;
    for (const shared of this.#open) {
      if (shared.inFlight.length < this.limits.queueMax && (!best || shared.inFlight.length < best.inFlight.length)) best = shared;
    }
    return best;
  }

  /** Statements go to pooled connections meanwhile; a connection the pool cannot give is asked for again by the next statement. */
  #openOne(): void {
    this.#opening++;
    this.pool.connect().then(
      (client) => {
        this.#opening--;
        const shared: Shared = { client, inFlight: [] };
        if (this.#closed) return this.#release(shared, undefined);
        // The pool's own listener logs the error (database.ts); these take it out of the rotation.
        client.on("error", (error: Error) => this.#retire(shared, error));
        client.on("end", () => this.#retire(shared, new Error("the shared connection ended")));
        this.#open.push(shared);
      },
      () => void this.#opening--,
    );
  }

  async #run<R>(shared: Shared, query: CompiledQuery, signal: AbortSignal | undefined, unprepared = false): Promise<QueryResult<R>> {
    if (signal?.aborted) throw abortReason(signal);
    const name = unprepared ? undefined : this.names.nameOf(query.sql, query.parameters.length);
    const running = submit<R & object>(shared.client, query.sql, query.parameters as unknown[], name);
    shared.inFlight.push(running);
    const settled = () => this.#settled(shared, running);
    running.then(settled, settled);
    try {
      return queryResult(signal ? await boundedWait(running, { signal }) : await running);
    } catch (error) {
      if (signal?.aborted) {
        this.#abandoned(shared, running);
        throw abortReason(signal);
      }
      if (isStalePlan(error) && name !== undefined) {
        // A table changed under a prepared statement (a rolling upgrade's migration): unprepared,
        // the statement runs; the connection's prepared statements go with it.
        try {
          return await this.#run<R>(shared, query, signal, true);
        } finally {
          this.#retire(shared, error as Error);
        }
      }
      if (!isStatementError(error)) this.#retire(shared, error as Error);
      throw error;
    }
  }

  /**
   * Still running after the grace, the statement is cancelled when it is the oldest one in
   * flight (the server runs them in order: it is the one running, or about to), so that a
   * statement waiting on a lock ends now rather than at statement_timeout. Either way the
   * connection is retired: a cancel landing just after the statement ended would hit the
   * next one, whose request then hears 57014 as if its own statement had timed out.
   */
  #abandoned(shared: Shared, running: Promise<unknown>): void {
    setTimeout(() => {
      if (!shared.inFlight.includes(running)) return;
      if (shared.inFlight[0] === running) cancelStatement(shared.client);
      this.#retire(shared, new Error("statement cancelled: its request was aborted"));
    }, ABANDONED_GRACE_MS).unref();
  }

  #settled(shared: Shared, running: Promise<unknown>): void {
    const at = shared.inFlight.indexOf(running);
    if (at >= 0) shared.inFlight.splice(at, 1);
    if (shared.retired && shared.inFlight.length === 0) this.#release(shared, shared.retired.reason);
  }

  #retire(shared: Shared, reason: Error | undefined): void {
    if (shared.retired) return;
    shared.retired = { reason };
    const at = this.#open.indexOf(shared);
    if (at >= 0) this.#open.splice(at, 1);
    if (shared.inFlight.length === 0) this.#release(shared, reason);
  }

  /** With a reason the pool closes the connection; without one it takes it back. */
  #release(shared: Shared, reason: Error | undefined): void {
    if (shared.released) return;
    shared.released = true;
    shared.client.release(reason);
  }
}
