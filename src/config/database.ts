import { join } from "node:path";
import type { DatabaseLimits, DatabaseTarget } from "../store/database.js";
import { HOUR_MS, integer } from "./env.js";

/** PostgreSQL at DATABASE_URL, else PGlite in the data dir; the bounds of the work on it. */
export function databaseSettings(env: NodeJS.ProcessEnv, dataDir: string): { database: DatabaseTarget; db: DatabaseLimits } {
  return {
    database: env.DATABASE_URL ? { kind: "postgres", url: env.DATABASE_URL } : { kind: "pglite", dataDir: join(dataDir, "pgdata") },
    db: {
      connectTimeoutMs: integer(env, "PLATFORM_DB_CONNECT_TIMEOUT_MS", 5_000, 100, HOUR_MS),
      statementTimeoutMs: integer(env, "PLATFORM_DB_STATEMENT_TIMEOUT_MS", 30_000, 100, HOUR_MS),
      idleInTransactionTimeoutMs: integer(env, "PLATFORM_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS", 60_000, 100, HOUR_MS),
      poolMax: integer(env, "PLATFORM_DB_POOL_MAX", 20, 1, 1000),
      preparedStatementsMax: integer(env, "PLATFORM_DB_PREPARED_STATEMENTS_MAX", 500, 0, 100_000),
      sharedConnections: integer(env, "PLATFORM_DB_SHARED_CONNECTIONS", 2, 0, 100),
      sharedQueueMax: integer(env, "PLATFORM_DB_SHARED_QUEUE_MAX", 16, 1, 10_000),
      sharedSlowHeadMs: integer(env, "PLATFORM_DB_SHARED_SLOW_HEAD_MS", 10, 0, HOUR_MS),
      conflictRetries: integer(env, "PLATFORM_DB_CONFLICT_RETRIES", 3, 0, 20),
    },
  };
}
