import { mkdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { appendRefused } from "./busy-instances.js";
import type { Tx } from "./db.js";
import { PgDriver } from "./pg/pg-driver.js";
import { parseTimestamptz, TIMESTAMPTZ } from "./pg/timestamps.js";
import { PGliteDriver } from "./pglite/pglite-driver.js";
import { ScopedKysely, type QueryObserver } from "./scoped.js";
import type { Database } from "./schema.js";

export type DatabaseTarget =
  | { kind: "postgres"; url: string }
  /**
   * `dataDir` undefined keeps the database in memory (tests). `seed`, an image of a database
   * (PGlite's `dumpDataDir`), starts an in-memory one from it instead of an empty cluster:
   * the test suite migrates once and starts hundreds of databases from the result, which
   * skips initdb (most of PGlite's start-up).
   */
  | { kind: "pglite"; dataDir?: string; seed?: Blob };

/** Bounds of the database work (read by config/database.ts); see below for where each applies. */
export interface DatabaseLimits {
  /** Connecting to PostgreSQL, and waiting for a free pooled connection. */
  connectTimeoutMs: number;
  /** PostgreSQL statement_timeout and lock_timeout on request connections. */
  statementTimeoutMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout. */
  idleInTransactionTimeoutMs: number;
  /** Connections per process in the pg pool. */
  poolMax: number;
  /** Statement texts prepared on the server per process (store/pg/statement-names.ts); 0: only the store's own prepared queries. */
  preparedStatementsMax: number;
  /** Pooled connections that statements outside transactions share (store/pg/shared-connections.ts); 0: none. At most poolMax − 1 are used. */
  sharedConnections: number;
  /** Statements in flight on one shared connection at most; more take a connection of their own. */
  sharedQueueMax: number;
  /** No statement queues behind one in flight this long on a shared connection. */
  sharedSlowHeadMs: number;
  /** How often a command is retried after a serialization failure or deadlock before Aborted. */
  conflictRetries: number;
}

/** The database as one request sees it: every wait and statement ends with the request's signal. */
interface RequestStore {
  readonly db: Kysely<Database>;
  /**
   * One transaction, retried when it lost a race that a fresh attempt can win (serialization
   * failure, deadlock, a concurrent append to the same aggregate); after the configured
   * retries the last error stands (Aborted for the caller).
   */
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface Store extends RequestStore {
  readonly kind: DatabaseTarget["kind"];
  /** The database for one request: its deadline or disconnect ends waits and cancels statements. */
  forRequest(signal: AbortSignal): RequestStore;
  /** True when the database answers a trivial query within `timeoutMs`. */
  isReachable(timeoutMs: number): Promise<boolean>;
  /** Schema work (migrations) on a connection without the request statement timeout. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations speak to past schemas, which no table type describes (Kysely's advice)
  withMaintenance<T>(fn: (db: Kysely<any>) => Promise<T>): Promise<T>;
  /** Connections of this process: checked out, idle, and requests waiting for one. */
  poolStats(): { inUse: number; idle: number; waiting: number };
  close(): Promise<void>;
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Sequences, positions and counts are int8. pg hands them out as strings and PGlite as
 * bigint; both become numbers here, which stay exact far beyond any sequence we reach.
 */
const toNumber = (value: string) => Number(value);

const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8 || oid === NUMERIC
      ? toNumber
      : oid === TIMESTAMPTZ && format !== "binary"
        ? parseTimestamptz
        : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** Migrations may lock and rewrite tables: they get this many request statement timeouts. */
const MAINTENANCE_TIMEOUT_FACTOR = 10;
/** The client waits this much longer than the server's statement_timeout before it gives up on the network. */
const READ_TIMEOUT_MARGIN_MS = 2_000;

/**
 * `onConnectionError` hears of connections that failed (a database restart, a terminated
 * backend, a cut network). The pool replaces them; without a listener pg would crash the process.
 * `observe` sees every statement (telemetry's SQL spans, src/telemetry/).
 */
export async function openStore(
  target: DatabaseTarget,
  limits: DatabaseLimits,
  onConnectionError: (error: Error) => void = () => {},
  observe?: QueryObserver,
): Promise<Store> {
  if (target.kind === "postgres") {
    const pool = postgresPool(target.url, limits, 1, limits.poolMax, onConnectionError);
    // Sharing leaves at least one pooled connection to transactions.
    const sharing = {
      connections: Math.min(limits.sharedConnections, limits.poolMax - 1),
      queueMax: limits.sharedQueueMax,
      slowHeadMs: limits.sharedSlowHeadMs,
    };
    const scoped = new ScopedKysely(new PgDriver(pool, limits.preparedStatementsMax, sharing), observe);
    return {
      ...common(scoped, limits),
      kind: "postgres",
      async withMaintenance(fn) {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations speak to past schemas, which no table type describes (Kysely's advice)
        const maintenance = new Kysely<any>({
          dialect: new PostgresDialect({ pool: postgresPool(target.url, limits, MAINTENANCE_TIMEOUT_FACTOR, 1, onConnectionError) }),
        });
        try {
          return await fn(maintenance);
        } finally {
          await maintenance.destroy();
        }
      },
      poolStats: () => ({ inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      close: () => scoped.db.destroy(),
    };
  }
  if (target.dataDir) await mkdir(target.dataDir, { recursive: true, mode: 0o700 });
  const pglite = await PGlite.create(target.dataDir ?? "memory://", {
    parsers: { [INT8]: toNumber, [NUMERIC]: toNumber },
    ...(target.seed && !target.dataDir && { loadDataDir: target.seed }),
  });
  const driver = new PGliteDriver(pglite, limits.statementTimeoutMs, limits.preparedStatementsMax);
  const scoped = new ScopedKysely(driver, observe);
  return {
    ...common(scoped, limits),
    kind: "pglite",
    withMaintenance: (fn) => fn(scoped.db),
    poolStats: () => driver.stats(),
    close: async () => {
      await scoped.db.destroy();
      await pglite.close();
    },
  };
}

/** What both databases do alike once their driver exists. */
function common(scoped: ScopedKysely, limits: DatabaseLimits) {
  const requestStore = (db: Kysely<Database>): RequestStore => ({
    db,
    transact: (fn) => transactWithRetries(db, fn, limits.conflictRetries),
  });
  return {
    ...requestStore(scoped.db),
    forRequest: (signal: AbortSignal) => requestStore(scoped.forSignal(signal)),
    async isReachable(timeoutMs: number) {
      try {
        await scoped
          .forSignal(AbortSignal.timeout(timeoutMs))
          .selectNoFrom((eb) => eb.lit(1).as("one"))
          .execute();
        return true;
      } catch {
        return false;
      }
    },
  };
}

function postgresPool(url: string, limits: DatabaseLimits, timeoutFactor: number, max: number, onConnectionError: (error: Error) => void): pg.Pool {
  const statementTimeout = limits.statementTimeoutMs * timeoutFactor;
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: pgTypes,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    keepAlive: true,
    statement_timeout: statementTimeout,
    lock_timeout: statementTimeout,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs * timeoutFactor,
    // The server's statement_timeout ends a slow statement; this ends one whose answer the
    // network swallowed (the driver then discards the connection).
    query_timeout: statementTimeout + READ_TIMEOUT_MARGIN_MS,
    // Statements queued together are written together (pg/pg-driver.ts sends a transaction's
    // begin with its first statement); one at a time otherwise, as every caller awaits each.
    pipeline: true,
  } as pg.PoolConfig);
  pool.on("error", onConnectionError);
  // pg removes the pool's listener while a client is checked out; a backend terminated
  // during a query then emits 'error' on that client, which must not be unhandled.
  pool.on("connect", (client) => client.on("error", onConnectionError));
  return pool;
}

/**
 * The unique constraint a PostgreSQL error says was violated: a concurrent writer beat a
 * command's own check (rpc/errors.ts maps these for the API; pages map the ones they expect).
 */
export function violatedUniqueConstraint(error: unknown): string | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === "23505" && typeof constraint === "string" ? constraint : undefined;
}

const RETRYABLE = new Set(["40001", "40P01"]);
/** Two writers appended to one aggregate at once: the later one lost, and may retry. */
export const SEQUENCE_CONSTRAINT = "events_aggregate_sequence";
/** A username taken by a concurrent create after the command's own check (user/commands.ts). */
export const USERNAME_CONSTRAINT = "users_instance_username";
/** A target's name in its instance: CreateTarget has no check of its own (action/target/commands.ts). */
export const TARGET_NAME_CONSTRAINT = "targets_instance_name";

function isRetryableConflict(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return (typeof code === "string" && RETRYABLE.has(code)) || violatedUniqueConstraint(error) === SEQUENCE_CONSTRAINT;
}

/**
 * Refused queued appends a write is run again after (busy-instances.ts: appendRefused): one, unless
 * event executions of its instance come and go between its attempts.
 */
const REFUSALS_MAX = 3;

async function transactWithRetries<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>, retries: number): Promise<T> {
  let refusals = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (error) {
      // A queued append met hooks with work: once more at once, appending the slow way (append.ts).
      if (refusals < REFUSALS_MAX && appendRefused(error)) {
        refusals++;
        attempt--;
        continue;
      }
      if (attempt >= retries || !isRetryableConflict(error)) throw error;
      // Jitter, so that the writers that collided do not collide again in lockstep.
      await sleep(Math.random() * 10 * (attempt + 1));
    }
  }
}
