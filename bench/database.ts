import { randomBytes } from "node:crypto";
import pg from "pg";

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the server of `serverUrl`, private to this run. */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString("hex")}`;
  await admin(serverUrl, (c) => c.query(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin(serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * Gathers the planner's statistics of the database at `url` after seeding, as autovacuum does
 * on a running server within a minute or so: measured at once after a bulk load, PostgreSQL
 * would still plan from the empty tables' defaults (a sign-in's join then scanned every user
 * of the instance).
 */
export async function analyze(url: string): Promise<void> {
  await admin(url, (c) => c.query("analyze"));
}

/** The bootstrapped first instance: the service serves it for Host localhost. */
export async function firstInstanceId(url: string): Promise<string> {
  return admin(url, async (c) => {
    const { rows } = await c.query<{ id: string }>("select id from instances order by created_at limit 1");
    if (!rows[0]) throw new Error("the service bootstrapped no instance");
    return rows[0].id;
  });
}
