import {
  CompiledQuery,
  DefaultQueryExecutor,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type TransactionSettings,
  type ConnectionProvider,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from "kysely";
import type { Database } from "./schema.js";
import { COMMIT, isBegin, ROLLBACK } from "./transaction-state.js";

/**
 * A driver whose connections can serve one request: had within the request's signal, and
 * running each statement under it, so that a deadline or a caller that left ends the wait
 * and the statement. Both of ours (pg, PGlite) are such drivers.
 */
export interface SignalDriver extends Driver {
  acquireFor(signal: AbortSignal | undefined): Promise<SignalConnection>;
  /**
   * A statement outside a transaction on a connection shared with other requests
   * (pg/shared-connections.ts), or undefined when the driver has none with room.
   */
  runShared?<R>(query: CompiledQuery, signal: AbortSignal | undefined): Promise<QueryResult<R>> | undefined;
}

export interface SignalConnection extends DatabaseConnection {
  executeQuery<R>(query: CompiledQuery, signal?: AbortSignal): Promise<QueryResult<R>>;
}

/** Transactions as plain statements on the connection Kysely hands in (scoped, observed). */
export abstract class StatementTransactions {
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    const access = settings.accessMode ? ` ${settings.accessMode}` : "";
    await connection.executeQuery(CompiledQuery.raw(`start transaction${level}${access}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(COMMIT);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(ROLLBACK);
  }
}

/** PostgreSQL's SQL dialect over one of our drivers (both databases speak PostgreSQL). */
function postgresDialect(driver: SignalDriver): Dialect {
  return {
    createDriver: () => driver,
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createAdapter: () => new PostgresAdapter(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
}

/**
 * Called as a statement starts; returns what to call when it ends (with the error, if it
 * failed), or undefined to let the statement run unobserved. Telemetry's SQL spans.
 */
export type QueryObserver = (statement: string) => ((error?: unknown) => void) | undefined;

/**
 * Kysely instances over one driver: the process's own (no signal), and one per request,
 * cheap to make (an executor and a Kysely object), bound to the request's signal. The signal
 * is passed, not carried in AsyncLocalStorage: on Node 20 and 22 that turns on async hooks
 * for every promise of the process, which cost more than a tenth of a request's CPU.
 */
export class ScopedKysely {
  readonly db: Kysely<Database>;
  private readonly executor: DefaultQueryExecutor;

  private readonly dialect: Dialect;

  constructor(
    private readonly driver: SignalDriver,
    private readonly observe: QueryObserver | undefined,
  ) {
    const dialect = (this.dialect = postgresDialect(driver));
    this.executor = new DefaultQueryExecutor(dialect.createQueryCompiler(), dialect.createAdapter(), this.provider(undefined), []);
    this.db = this.kysely(this.executor);
  }

  forSignal(signal: AbortSignal): Kysely<Database> {
    return this.kysely(this.executor.withConnectionProvider(this.provider(signal)));
  }

  private kysely(executor: DefaultQueryExecutor): Kysely<Database> {
    return new Kysely<Database>({ config: { dialect: this.dialect }, dialect: this.dialect, driver: this.driver, executor });
  }

  private provider(signal: AbortSignal | undefined): ConnectionProvider {
    const { driver, observe } = this;
    return {
      async provideConnection(consumer) {
        // Statements with a signal (a request's, or a worker's that passes its shutdown signal)
        // share connections; those without (sweepers, start-up work), which may run long, take their own.
        const routed = driver.runShared && signal ? new RoutedConnection(driver, signal) : undefined;
        const connection = routed ?? (await driver.acquireFor(signal));
        try {
          return await consumer(signal || observe ? new ScopedConnection(connection, signal, observe) : connection);
        } finally {
          await (routed ? routed.release() : driver.releaseConnection(connection));
        }
      },
    };
  }
}

/**
 * A connection had only when a statement needs one of its own: a transaction's, from its
 * begin on. Until then each statement runs on a shared connection where the driver has one
 * with room (SignalDriver.runShared).
 */
class RoutedConnection implements SignalConnection {
  private own: SignalConnection | undefined;

  constructor(
    private readonly driver: SignalDriver,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery, signal = this.signal): Promise<QueryResult<R>> {
    if (!this.own && !isBegin(query)) {
      const shared = this.driver.runShared?.<R>(query, signal);
      if (shared) return shared;
    }
    this.own ??= await this.driver.acquireFor(signal);
    return this.own.executeQuery<R>(query, signal);
  }

  // Kysely's interface; nothing here streams.
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not used");
  }

  async release(): Promise<void> {
    if (this.own) await this.driver.releaseConnection(this.own);
  }
}

/** What Kysely (and the driver's begin/commit) runs statements on while a request holds a connection. */
class ScopedConnection implements DatabaseConnection {
  constructor(
    private readonly inner: SignalConnection,
    private readonly signal: AbortSignal | undefined,
    private readonly observe: QueryObserver | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const end = this.observe?.(query.sql);
    if (!end) return this.inner.executeQuery<R>(query, this.signal);
    try {
      const result = await this.inner.executeQuery<R>(query, this.signal);
      end();
      return result;
    } catch (error) {
      end(error);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
