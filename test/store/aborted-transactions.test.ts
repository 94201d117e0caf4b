import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/database.js";

/**
 * A request aborted (deadline, caller gone) in the middle of a transaction must leave no
 * trace: nothing of it committed, no transaction left open on a connection that the next
 * request then uses.
 */
describe.each(DATABASE_KINDS)("requests aborted inside a transaction (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 2 });
    await sql`create table t (n int not null)`.execute(store.db);
    await sql`create function slow_insert() returns trigger language plpgsql as $$
      begin
        if new.n < 0 then perform pg_sleep(2); end if;
        return new;
      end $$`.execute(store.db);
    await sql`create trigger slow before insert on t for each row execute function slow_insert()`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const count = async () => (await sql<{ n: number }>`select count(*)::int as n from t`.execute(store.db)).rows[0]!.n;
  /** Backends of this database (other than ours) idle inside a transaction. */
  async function idleInTransaction(): Promise<number> {
    if (database.target.kind !== "postgres") return 0;
    const client = new pg.Client({ connectionString: database.target.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'",
      );
      return rows[0].n;
    } finally {
      await client.end();
    }
  }

  it("an abort between two statements rolls back: nothing committed, no transaction left open", async () => {
    const controller = new AbortController();
    const before = await count();
    const attempt = store.forRequest(controller.signal).transact(async (tx) => {
      await sql`insert into t values (1)`.execute(tx);
      controller.abort();
      await sql`insert into t values (2)`.execute(tx);
    });
    await expect(attempt).rejects.toThrow();
    // Every pooled connection in turn: none inherits the aborted transaction.
    for (let i = 0; i < 3; i++) {
      await store.transact(async (tx) => {
        await sql`insert into t values (10)`.execute(tx);
      });
    }
    expect(await count()).toBe(before + 3);
    expect(await idleInTransaction()).toBe(0);
  });

  it("an abort before commit rolls back as well", async () => {
    const controller = new AbortController();
    const before = await count();
    const attempt = store.forRequest(controller.signal).transact(async (tx) => {
      await sql`insert into t values (3)`.execute(tx);
      controller.abort();
    });
    await expect(attempt).rejects.toThrow();
    expect(await count()).toBe(before);
    expect(await idleInTransaction()).toBe(0);
  });

  it.skipIf(kind !== "postgres")("an abort during a slow statement answers at once and stops the statement on the server", async () => {
    const controller = new AbortController();
    const started = performance.now();
    const attempt = store.forRequest(controller.signal).transact(async (tx) => {
      await sql`insert into t values (-1)`.execute(tx);
    });
    setTimeout(() => controller.abort(), 100);
    await expect(attempt).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(600);
    // Cancelled, not left sleeping its 2 s: the next writers are not held up.
    const client = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await client.connect();
    try {
      await expect
        .poll(
          async () =>
            (
              await client.query(
                "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like '%values (-1)%' and pid <> pg_backend_pid()",
              )
            ).rows[0].n,
          { timeout: 1_000, interval: 20 },
        )
        .toBe(0);
    } finally {
      await client.end();
    }
    expect(await idleInTransaction()).toBe(0);
    await store.transact(async (tx) => {
      await sql`insert into t values (11)`.execute(tx);
    });
  });
});
