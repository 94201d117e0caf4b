import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import pg from "pg";
import { inject } from "vitest";
import type { DatabaseTarget } from "../../src/store/database.js";

export interface TestDatabase {
  target: DatabaseTarget;
  drop(): Promise<void>;
}

/** Which databases the suites run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DATABASE_KINDS: DatabaseTarget["kind"][] = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

/**
 * The image as PGlite reads it (only `arrayBuffer()`, for the tar inside): a copy of bytes
 * read once per worker. Node's own Blob copied the image (27 MB then) into itself and out
 * again in chunks, about 0.4 s of CPU per database start.
 */
class SeedImage extends Blob {
  constructor(private readonly image: ArrayBuffer) {
    super([]);
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    // A copy: the database's files may be made of views into it.
    return Promise.resolve(this.image.slice(0));
  }
}

let seed: Promise<SeedImage> | undefined;

/** The migrated PGlite image of this run (support/pglite-seed.ts), read once per worker. */
function pgliteSeed(): Promise<Blob> {
  seed ??= readFile(inject("pgliteSeed")).then((file) => new SeedImage(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength)));
  return seed;
}

/**
 * A fresh database of the given kind, migrated and otherwise empty, private to one suite.
 * `unmigrated`: a PostgreSQL database without any table, for the service's own first start.
 */
export async function createTestDatabase(kind: DatabaseTarget["kind"], opts: { unmigrated?: boolean } = {}): Promise<TestDatabase> {
  if (kind === "pglite") return { target: { kind: "pglite", seed: await pgliteSeed() }, drop: async () => {} };
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error("TEST_DATABASE_URL is not set");
  const name = `test_${randomBytes(6).toString("hex")}`;
  await onServer(base, async (admin) => {
    await admin.query(opts.unmigrated ? `create database ${name}` : `create database ${name} template ${inject("postgresTemplate")}`);
    // A test database is dropped at the end of its file: its commits need not wait for the
    // disk (what they mean to other sessions is the same), and the suite spends less time waiting.
    await admin.query(`alter database ${name} set synchronous_commit = off`);
  });
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    target: { kind: "postgres", url: url.toString() },
    drop: () =>
      onServer(base, async (client) => {
        // pg's pool.end() resolves before its clients have said goodbye; terminating them
        // mid-goodbye surfaces as an unhandled error in the closed service. Wait for them.
        for (let i = 0; i < 50; i++) {
          const { rows } = await client.query("select count(*)::int as n from pg_stat_activity where datname = $1", [name]);
          if (rows[0].n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`drop database if exists ${name} with (force)`);
      }),
  };
}

/** Runs `fn` with a client of the PostgreSQL server at `url` (creating and dropping databases), closed afterwards. */
export async function onServer<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
