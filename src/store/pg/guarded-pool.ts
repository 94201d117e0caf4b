import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import pg from "pg";
import { abortReason, boundedWait, currentAbortSignal } from "../request-scope.js";

export interface GuardedPoolOptions {
  /** Waiting for a pooled connection (and opening one) gives up after this. */
  connectTimeoutMs: number;
  /**
   * The longest a statement may take to answer, measured by the client: the server's
   * statement_timeout ends a slow statement, this ends a statement whose answer the network
   * swallowed. A connection that hit it is discarded.
   */
  readTimeoutMs: number;
}

/** pg's own message when a pooled connection is not had within connectionTimeoutMillis. */
export class PoolTimeout extends Error {
  override name = "PoolTimeout";
  readonly code = "POOL_TIMEOUT";
  constructor(ms: number) {
    super(`no database connection within ${ms} ms`);
  }
}

/**
 * The pg pool as Kysely sees it, with the faults of a real network handled in one place:
 * a connection is had within the connect timeout or the request's deadline; a statement
 * whose request is aborted is cancelled on the server (so that its locks go at once); a
 * connection that failed, timed out or was cancelled is discarded rather than reused; and
 * every client has an error listener, so that a backend terminated mid-query fails that
 * query and never crashes the process.
 */
export function guardedPool(pool: pg.Pool, opts: GuardedPoolOptions): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, GuardedClient>();
  return {
    async connect() {
      const client = await boundedWait(() => pool.connect(), {
        signal: currentAbortSignal(),
        timeoutMs: opts.connectTimeoutMs,
        timeoutError: () => new PoolTimeout(opts.connectTimeoutMs),
        onLate: (late) => late.release(),
      });
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = new GuardedClient(client, pool, opts.readTimeoutMs);
        wrappers.set(client, wrapper);
      }
      wrapper.checkedOut();
      return wrapper;
    },
    end: () => pool.end(),
  };
}

class GuardedClient implements PostgresPoolClient {
  /** Set once the connection must not go back to the pool. */
  private discard: Error | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly pool: pg.Pool,
    private readonly readTimeoutMs: number,
  ) {}

  checkedOut() {
    this.discard = undefined;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: never): never;
  async query<R>(sql: string, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    const signal = currentAbortSignal();
    if (signal?.aborted) throw abortReason(signal);
    const onAbort = () => this.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // pg reads query_timeout per query too; its types only declare it on the client config.
      const config = { text: sql, values: parameters as unknown[], query_timeout: this.readTimeoutMs } as pg.QueryConfig;
      return (await this.client.query(config)) as unknown as PostgresQueryResult<R>;
    } catch (error) {
      // A cancelled statement reports 57014 like a statement timeout; the caller's
      // reason (deadline or disconnect) is what happened.
      if (signal?.aborted) throw abortReason(signal);
      if (!isStatementError(error)) this.discard ??= error as Error;
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  release() {
    this.client.release(this.discard);
  }

  /**
   * Asks the server to stop this connection's statement (pg_cancel_backend from another
   * pooled connection, a plain SQL call), and discards this connection: a cancel that lands
   * late must never hit a later request's statement.
   */
  private cancel() {
    this.discard ??= new Error("statement cancelled: its request was aborted");
    const pid = (this.client as unknown as { processID?: number }).processID;
    if (pid === undefined) return;
    this.pool.query("select pg_cancel_backend($1)", [pid]).catch(() => {
      // The pool may be exhausted or the database gone; discarding the connection is enough then.
    });
  }
}

/**
 * Errors the server reported for one statement (they carry a SQLSTATE and leave the
 * connection usable); anything else is a broken connection or a read timeout.
 */
function isStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08") && !code.startsWith("57P");
}
