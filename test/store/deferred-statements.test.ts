import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { deferStatement } from "../../src/store/deferred.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/database.js";

/**
 * Statements queued by deferStatement (store/deferred.ts): on PostgreSQL they go to the server
 * with the transaction's next statement or its commit; on PGlite they run at once. Either way
 * a transaction behaves as if each had run where it was queued: in order, and its failure
 * failing the transaction with its own error. One pooled connection, so every case also
 * shows that the connection is left clean for the next.
 */
describe.each(DATABASE_KINDS)("deferred statements (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 });
    await sql`create table deferred_t (id text primary key)`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    await sql`delete from deferred_t`.execute(store.db);
    await sql`insert into deferred_t values ('taken')`.execute(store.db);
  });

  const ids = async () => (await sql<{ id: string }>`select id from deferred_t order by id`.execute(store.db)).rows.map((r) => r.id);
  const insert = (id: string) => sql`insert into deferred_t values (${id})`.compile(store.db);
  /** Fails on a connection left inside a transaction block: VACUUM cannot run in one. */
  const outsideTransaction = () => sql`vacuum deferred_t`.execute(store.db);

  it("runs before the statement after it, in the order queued, and commits with the rest", async () => {
    const seen = await store.transact(async (tx) => {
      await deferStatement(tx, insert("a"));
      await deferStatement(tx, insert("b"));
      return (await sql<{ id: string }>`select id from deferred_t order by id`.execute(tx)).rows.map((r) => r.id);
    });
    expect(seen).toEqual(["a", "b", "taken"]);
    expect(await ids()).toEqual(["a", "b", "taken"]);
  });

  it("commits a transaction of deferred statements only, the first one queued right after its begin", async () => {
    await store.transact(async (tx) => {
      await deferStatement(tx, insert("only"));
    });
    expect(await ids()).toEqual(["only", "taken"]);
    await outsideTransaction();
  });

  it("fails the next statement with its own error, and the transaction leaves nothing", async () => {
    const failed = store.transact(async (tx) => {
      await deferStatement(tx, insert("c"));
      await deferStatement(tx, insert("taken"));
      await sql`select 1`.execute(tx);
      return "not reached";
    });
    await expect(failed).rejects.toMatchObject({ code: "23505" });
    expect(await ids()).toEqual(["taken"]);
    await outsideTransaction();
  });

  it("fails the commit it went with: nothing is committed and the call fails with its error", async () => {
    const failed = store.transact(async (tx) => {
      await sql`insert into deferred_t values ('d')`.execute(tx);
      await deferStatement(tx, insert("taken"));
    });
    await expect(failed).rejects.toMatchObject({ code: "23505" });
    expect(await ids()).toEqual(["taken"]);
    await outsideTransaction();
    await store.transact(async (tx) => {
      await deferStatement(tx, insert("after"));
    });
    expect(await ids()).toEqual(["after", "taken"]);
  });

  it("never runs when the transaction gives up before anything else was sent", async () => {
    await expect(
      store.transact(async (tx) => {
        await deferStatement(tx, insert("e"));
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    await expect(
      store.transact(async (tx) => {
        await sql`insert into deferred_t values ('f')`.execute(tx);
        await deferStatement(tx, insert("g"));
        throw new Error("changed my mind again");
      }),
    ).rejects.toThrow("changed my mind again");
    expect(await ids()).toEqual(["taken"]);
    await outsideTransaction();
  });
});
