import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import type { TestProject } from "vitest/node";
import { migrateToLatest } from "../../src/store/migrate.js";
import { PGliteDriver } from "../../src/store/pglite/pglite-driver.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A file holding an image of an empty, migrated PGlite database (support/database.ts). */
    pgliteSeed: string;
  }
}

/**
 * vitest globalSetup: migrates one in-memory PGlite database and writes its image to a
 * file. Every PGlite test database starts from that image: starting PGlite from an image
 * takes a fraction of the time of its initdb, and the migrations run once, not per server
 * (the service still checks them at start, finding nothing to do).
 *
 * The image is also made cheap to start, which a test database does about 300 times a
 * run: without the two template databases (the service uses neither) it holds half the
 * files to unpack, and its settings trade what an in-memory database never has
 * (durability across a crash) for less work per start and per commit. A start costs
 * about 40% less CPU so (docs/testing.md).
 */
const IMAGE_SETTINGS = [
  // Commits need not wait for their WAL, nor pages be written whole after a checkpoint:
  // memory:// loses everything at close anyway.
  "synchronous_commit = off",
  "full_page_writes = off",
  "wal_init_zero = off",
  // PGlite's defaults size shared memory for 100 connections and 128 MB of buffers, all
  // cleared at every start; a test database is a few MB and has one connection.
  "shared_buffers = '16MB'",
  "max_connections = 10",
];
export default async function seed(project: TestProject): Promise<() => Promise<void>> {
  // WAL in segments of 1 MB rather than 16: the segment is written whole into every database
  // that starts from the image, and was 16 MB of its 27.
  const pglite = await PGlite.create("memory://", { initDbStartParams: ["--wal-segsize=1"] });
  const db = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new PGliteDriver(pglite, 600_000, 0),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  await migrateToLatest(db);
  await pglite.query("update pg_database set datistemplate = false where datname in ('template0', 'template1')");
  for (const template of ["template0", "template1"]) await pglite.query(`drop database ${template}`);
  for (const setting of IMAGE_SETTINGS) await pglite.query(`alter system set ${setting}`);
  const image = await pglite.dumpDataDir("none");
  await db.destroy();
  await pglite.close();
  const file = join(tmpdir(), `platform-test-pglite-${process.pid}.tar`);
  await writeFile(file, Buffer.from(await image.arrayBuffer()));
  project.provide("pgliteSeed", file);
  return () => rm(file, { force: true });
}
