import type { PGlite } from "@electric-sql/pglite";
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import { boundedWait, currentAbortSignal } from "../request-scope.js";

/**
 * Kysely dialect for embedded PGlite. Kysely ships one from 0.29 on, which needs Node 22;
 * this one follows the same structure. PGlite is a single connection, so the driver hands
 * it out to one holder at a time and queues the others (transactions stay isolated).
 */
export class PGliteDialect implements Dialect {
  private readonly driver: PGliteDriver;
  /**
   * `waitTimeoutMs` bounds how long a caller queues for the one connection (PGlite has no
   * statement_timeout of its own); the request's abort signal ends the wait sooner.
   */
  constructor(pglite: PGlite, waitTimeoutMs: number) {
    this.driver = new PGliteDriver(pglite, waitTimeoutMs);
  }
  createDriver(): Driver {
    return this.driver;
  }
  /** The one connection as a pool of one, for metrics. */
  stats() {
    const waiting = this.driver.waiting;
    return { inUse: this.driver.holders > 0 ? 1 : 0, idle: this.driver.holders > 0 ? 0 : 1, waiting };
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
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
  ) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  /**
   * Queues for the connection. A caller that gives up keeps its place in the chain and
   * passes the connection straight on when its turn comes, so the queue never breaks.
   */
  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    this.holders++;
    const handOver = () => {
      this.holders--;
      release();
    };
    await boundedWait(() => previous, {
      signal: currentAbortSignal(),
      timeoutMs: this.waitTimeoutMs,
      timeoutError: () => new ConnectionWaitTimeout(this.waitTimeoutMs),
      onLate: () => {},
    }).catch((error: unknown) => {
      void previous.then(handOver);
      throw error;
    });
    this.connection.release = handOver;
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    const access = settings.accessMode ? ` ${settings.accessMode}` : "";
    await conn.executeQuery(CompiledQuery.raw(`start transaction${level}${access}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(): Promise<void> {
    this.connection.release();
  }

  async destroy(): Promise<void> {
    await this.queue;
  }
}

/** The embedded database was busy with other work for longer than a statement may take. */
export class ConnectionWaitTimeout extends Error {
  override name = "ConnectionWaitTimeout";
  /** What PostgreSQL says when a statement_timeout fires: the same fault, the same answer. */
  readonly code = "57014";
  constructor(ms: number) {
    super(`the embedded database was busy for ${ms} ms`);
  }
}

class PGliteConnection implements DatabaseConnection {
  release: () => void = () => {};

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not supported on PGlite");
  }
}
