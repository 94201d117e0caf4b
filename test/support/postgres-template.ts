import { randomBytes } from "node:crypto";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrateToLatest } from "../../src/store/migrate.js";
import { onServer } from "./database.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated PostgreSQL database every test database is copied from, when TEST_DATABASE_URL is set (support/database.ts). */
    postgresTemplate: string;
  }
}

/**
 * vitest globalSetup, PostgreSQL's counterpart of pglite-seed.ts: migrates one database
 * and leaves it untouched, and every test database is created as a copy of it
 * (`create database … template …`). A copy takes about 0.3 s; an empty database and its
 * migrations about 0.8 s, which about 170 databases a run paid. The service still checks
 * its migrations at start, finding nothing to do.
 */
export default async function template(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `test_template_${randomBytes(6).toString("hex")}`;
  await onServer(base, (client) => client.query(`create database ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  // A template is copied only while nobody is connected to it: the pool is closed before any suite starts.
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  project.provide("postgresTemplate", name);
  return () => onServer(base, (client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined);
}
