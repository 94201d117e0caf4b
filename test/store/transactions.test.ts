import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/database.js";

/**
 * Transactions as the store runs them. On PostgreSQL the driver sends a transaction's begin
 * together with its first statement (pg/pg-driver.ts): these pin down that the first
 * statement is still inside the transaction, with the transaction's settings, and that a
 * transaction which runs nothing, or fails at once, leaves the connection clean. One pooled
 * connection, so every step runs on the connection the previous one left.
 */
describe.each(DATABASE_KINDS)("transactions (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 });
    await sql`create table tx_t (id text primary key)`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const ids = async () => (await sql<{ id: string }>`select id from tx_t order by id`.execute(store.db)).rows.map((r) => r.id);
  /** Fails on a connection left inside a transaction block: VACUUM cannot run in one. */
  const outsideTransaction = () => sql`vacuum tx_t`.execute(store.db);

  it("rolls back the first statement with the rest", async () => {
    await expect(
      store.transact(async (tx) => {
        await sql`insert into tx_t values ('first')`.execute(tx);
        await sql`insert into tx_t values ('second')`.execute(tx);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await ids()).toEqual([]);
    await store.transact(async (tx) => {
      await sql`insert into tx_t values ('kept')`.execute(tx);
    });
    expect(await ids()).toEqual(["kept"]);
  });

  it("runs the first statement with the transaction's settings", async () => {
    const level = await store.db
      .transaction()
      .setIsolationLevel("serializable")
      .execute(async (tx) => (await sql<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(tx)).rows[0]!.level);
    expect(level).toBe("serializable");
    // Two statements of one transaction share its start.
    const same = await store.transact(async (tx) => {
      const first = (await sql<{ t: Date }>`select now() as t`.execute(tx)).rows[0]!.t;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = (await sql<{ t: Date }>`select now() as t`.execute(tx)).rows[0]!.t;
      return first.getTime() === second.getTime();
    });
    expect(same).toBe(true);
  });

  it("leaves the connection clean after a transaction that ran nothing, or failed at its first statement", async () => {
    await store.transact(async () => {});
    await outsideTransaction();
    await expect(store.transact(async (tx) => sql`select * from no_such_table`.execute(tx))).rejects.toThrow(/no_such_table/);
    await outsideTransaction();
    await store.transact(async (tx) => {
      await sql`insert into tx_t values ('after')`.execute(tx);
    });
    expect(await ids()).toEqual(["after", "kept"]);
  });
});
