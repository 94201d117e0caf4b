import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { PGliteDialect } from "./dialect/pglite-dialect.js";
import type { Database } from "./schema.js";

export type DatabaseTarget =
  | { kind: "postgres"; url: string; poolSize?: number }
  /** `dataDir` undefined keeps the database in memory (tests). */
  | { kind: "pglite"; dataDir?: string };

export interface Store {
  readonly db: Kysely<Database>;
  readonly kind: DatabaseTarget["kind"];
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

/**
 * `onIdleError` hears of connections that failed while idle (a database restart, a
 * terminated backend). The pool replaces them; without a listener pg would crash the process.
 */
export async function openStore(target: DatabaseTarget, onIdleError: (error: Error) => void = () => {}): Promise<Store> {
  if (target.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: target.url,
      max: target.poolSize ?? 20,
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8 || oid === NUMERIC
            ? toNumber
            : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
      },
    });
    pool.on("error", onIdleError);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: "postgres",
      poolStats: () => ({ inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      close: () => db.destroy(),
    };
  }
  if (target.dataDir) await mkdir(target.dataDir, { recursive: true });
  const pglite = await PGlite.create(target.dataDir ?? "memory://", {
    parsers: { [INT8]: toNumber, [NUMERIC]: toNumber },
  });
  const dialect = new PGliteDialect(pglite);
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    kind: "pglite",
    poolStats: () => dialect.stats(),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/** True when the database answers; /ready and the gRPC health service use it. */
export async function isReachable(store: Store): Promise<boolean> {
  try {
    await store.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
    return true;
  } catch {
    return false;
  }
}
