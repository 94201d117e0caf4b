import type { CompiledQuery, QueryResult } from "kysely";
import type pg from "pg";
import { abortReason, boundedWait } from "../abort.js";
import { CANCEL_GRACE_MS, cancelStatement } from "./cancel.js";
import type { StatementNames } from "./statement-names.js";
import { isMissingStatement, isStalePlan, isStatementError, queryResult, submit } from "./statements.js";

export interface SharingLimits {
  /** Connections held for statements outside transactions; 0 turns sharing off. */
  connections: number;
  /** Statements in flight on one of them at most; past that a statement takes a pooled connection of its own. */
  queueMax: number;
  /** A connection whose oldest statement has been in flight this long takes no more: nothing queues long behind a slow statement. */
  slowHeadMs: number;
}

interface InFlight {
  running: Promise<unknown>;
  /** performance.now() at its sending. */
  since: number;
  /** Its request gave up, and its grace passed: cancelled once it is the one the server runs. */
  overdue?: true;
}

interface Shared {
  client: pg.PoolClient;
  /** Statements sent and not yet answered, in the order the server runs them. */
  inFlight: InFlight[];
  /** Taken no more statements; released (destroyed unless healthy) once none is in flight. */
  retired?: { reason: Error | undefined };
  released?: true;
}

/** A statement on a connection of its own (the pool's): where a shared one cannot serve it. */
export type OwnConnectionRun = <R>(query: CompiledQuery, signal: AbortSignal | undefined) => Promise<QueryResult<R>>;

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
 *   taken, never one whose oldest statement has run longer than `slowHeadMs`, and with none
 *   left (`queueMax` in flight, or a slow head) the statement takes a pooled connection.
 * - A statement whose request is aborted is abandoned: its caller hears of the abort at once.
 *   If it still runs after a short grace, its connection takes no new statements and is
 *   closed once the ones in flight are answered, and it is cancelled as soon as it is the one
 *   the server runs (#abandoned), as a connection of its own would have it cancelled.
 * - A connection that fails (a broken socket, a read timeout, a stale prepared plan) is
 *   retired the same way; its statements in flight fail as they would on a connection of
 *   their own, but for a stale plan's, which run on one of their own. A retired connection
 *   still counts toward PLATFORM_DB_SHARED_CONNECTIONS until it is released: sharing never
 *   holds more of the pool than that, whatever stalls.
 * - pg's read timeout (query_timeout) runs from a statement's sending, so time queued behind
 *   others counts: the slow-head rule keeps that short.
 */
export class SharedConnections {
  readonly #open: Shared[] = [];
  #opening = 0;
  /** Retired and not yet released: they still hold pooled connections. */
  #draining = 0;
  #closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly names: StatementNames,
    private readonly limits: SharingLimits,
    private readonly ownConnection: OwnConnectionRun,
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
    // Retired connections still draining count: sharing never holds more than its share of the pool.
    if (this.#open.length + this.#opening + this.#draining < this.limits.connections) this.#openOne();
    const now = performance.now();
    let best: Shared | undefined;
    for (const shared of this.#open) {
      const queued = shared.inFlight.length;
      if (queued >= this.limits.queueMax || (queued > 0 && now - shared.inFlight[0]!.since > this.limits.slowHeadMs)) continue;
      if (!best || queued < best.inFlight.length) best = shared;
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

  async #run<R>(shared: Shared, query: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> {
    if (signal?.aborted) throw abortReason(signal);
    const name = this.names.nameOf(query.sql, query.parameters.length);
    const running = submit<R & object>(shared.client, query.sql, query.parameters as unknown[], name);
    const entry: InFlight = { running, since: performance.now() };
    shared.inFlight.push(entry);
    const settled = () => this.#settled(shared, entry);
    running.then(settled, settled);
    try {
      return queryResult(signal ? await boundedWait(running, { signal }) : await running);
    } catch (error) {
      if (signal?.aborted) {
        this.#abandoned(shared, entry);
        throw abortReason(signal);
      }
      if (name !== undefined && (isStalePlan(error) || isMissingStatement(error))) {
        // A table changed under a prepared statement (a rolling upgrade's migration): the
        // connection's prepared statements go with it, and the statement runs on a connection
        // of its own, which handles that (pg-driver.ts). A Parse that failed (a lock timeout
        // during a migration) leaves the statements sent behind it under its name without one.
        this.#retire(shared, error as Error);
        return this.ownConnection<R>(query, signal);
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
  #abandoned(shared: Shared, entry: InFlight): void {
    setTimeout(() => {
      if (!shared.inFlight.includes(entry)) return;
      entry.overdue = true;
      this.#retire(shared, new Error("statement cancelled: its request was aborted"));
      this.#cancelOverdueHead(shared);
    }, CANCEL_GRACE_MS).unref();
  }

  /** Also when an overdue statement becomes the oldest: one behind another's waits its turn, then goes. */
  #cancelOverdueHead(shared: Shared): void {
    if (shared.inFlight[0]?.overdue) cancelStatement(shared.client);
  }

  #settled(shared: Shared, entry: InFlight): void {
    const at = shared.inFlight.indexOf(entry);
    if (at >= 0) shared.inFlight.splice(at, 1);
    if (at === 0) this.#cancelOverdueHead(shared);
    if (shared.retired && shared.inFlight.length === 0) this.#release(shared, shared.retired.reason);
  }

  #retire(shared: Shared, reason: Error | undefined): void {
    if (shared.retired) return;
    shared.retired = { reason };
    const at = this.#open.indexOf(shared);
    if (at >= 0) this.#open.splice(at, 1);
    this.#draining++;
    if (shared.inFlight.length === 0) this.#release(shared, reason);
  }

  /** With a reason the pool closes the connection; without one it takes it back. */
  #release(shared: Shared, reason: Error | undefined): void {
    if (shared.released) return;
    shared.released = true;
    if (shared.retired) this.#draining--;
    shared.client.release(reason);
  }
}
