import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from "kysely";

/**
 * Called as a statement starts; returns what to call when it ends (with the error, if it
 * failed), or undefined to let the statement run unobserved.
 */
export type QueryObserver = (statement: string) => ((error?: unknown) => void) | undefined;

/**
 * Wraps a Kysely dialect so that every statement, on whatever driver, is observed from
 * start to end. This sits at the driver because that is the one layer every statement
 * passes on both pg and PGlite: a Kysely plugin sees queries being built but not their
 * execution (no end, no errors), and the OpenTelemetry pg instrumentation patches pg's
 * CommonJS module (not PGlite, and not under ESM without a loader hook).
 */
export function observeQueries(dialect: Dialect, observe: QueryObserver): Dialect {
  return {
    createDriver: () => new ObservedDriver(dialect.createDriver(), observe),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

async function observed<T>(observe: QueryObserver, statement: string, run: () => Promise<T>): Promise<T> {
  const end = observe(statement);
  if (!end) return run();
  try {
    const result = await run();
    end();
    return result;
  } catch (error) {
    end(error);
    throw error;
  }
}

class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly observe: QueryObserver,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return observed(this.observe, query.sql, () => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    const end = this.observe(query.sql);
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
      end?.();
    } catch (error) {
      end?.(error);
      throw error;
    }
  }
}

/**
 * Drivers get their own connection objects back: theirs may carry more than the interface
 * (pg's release()). Transaction control statements are observed here, as the driver
 * issues them on the unwrapped connection.
 */
class ObservedDriver implements Driver {
  savepoint?: Driver["savepoint"];
  rollbackToSavepoint?: Driver["rollbackToSavepoint"];
  releaseSavepoint?: Driver["releaseSavepoint"];

  constructor(
    private readonly driver: Driver,
    private readonly observe: QueryObserver,
  ) {
    // Kysely tells "savepoints unsupported" by these methods' absence, so only what the driver has.
    const { savepoint, rollbackToSavepoint, releaseSavepoint } = driver;
    if (savepoint) this.savepoint = (conn, name, compile) => savepoint.call(driver, unwrap(conn), name, compile);
    if (rollbackToSavepoint) this.rollbackToSavepoint = (conn, name, compile) => rollbackToSavepoint.call(driver, unwrap(conn), name, compile);
    if (releaseSavepoint) this.releaseSavepoint = (conn, name, compile) => releaseSavepoint.call(driver, unwrap(conn), name, compile);
  }

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ObservedConnection(await this.driver.acquireConnection(), this.observe);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return observed(this.observe, "begin", () => this.driver.beginTransaction(unwrap(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return observed(this.observe, "commit", () => this.driver.commitTransaction(unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return observed(this.observe, "rollback", () => this.driver.rollbackTransaction(unwrap(connection)));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof ObservedConnection ? connection.inner : connection;
}
