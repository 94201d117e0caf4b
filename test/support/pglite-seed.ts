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
 */
export default async function seed(project: TestProject): Promise<() => Promise<void>> {
  const pglite = await PGlite.create("memory://");
  const db = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new PGliteDriver(pglite, 600_000),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  await migrateToLatest(db);
  const image = await pglite.dumpDataDir("none");
  await db.destroy();
  await pglite.close();
  const file = join(tmpdir(), `platform-test-pglite-${process.pid}.tar`);
  await writeFile(file, Buffer.from(await image.arrayBuffer()));
  project.provide("pgliteSeed", file);
  return () => rm(file, { force: true });
}
