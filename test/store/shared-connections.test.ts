import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { prepared } from "../../src/store/prepared.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { until } from "../support/until.js";

const postgresOnly = describe.skipIf(!process.env.TEST_DATABASE_URL);

const backendPid = (db: Store["db"]) => sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db).then((r) => r.rows[0]!.pid);

/**
 * Statements outside transactions on connections that every request shares (pipelined:
 * store/pg/shared-connections.ts), and what bounds them: a queue per connection, transactions
 * on connections of their own, an error or an abort that stays the statement's own.
 */
postgresOnly("shared connections (PostgreSQL)", () => {
  let database: TestDatabase;
  let store: Store;
  let observer: pg.Client;
  /** Holds a lock when a test takes one. */
  let locker: pg.Client | undefined;

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    // No slow-head rule here (a loaded machine would make any statement slow): the one below tests it.
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 6, sharedConnections: 2, sharedQueueMax: 8, sharedSlowHeadMs: 60_000 });
    await sql`create table shared_t (id text primary key, n int not null)`.execute(store.db);
    await sql`insert into shared_t values ('a', 1), ('b', 2)`.execute(store.db);
    observer = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await observer.connect();
  });
  afterEach(async () => {
    await locker?.query("rollback").catch(() => {});
    await locker?.end();
    locker = undefined;
  });
  afterAll(async () => {
    await observer?.end();
    await store?.close();
    await database?.drop();
  });

  /** Takes the table's lock in another session, held until the test rolls it back. */
  const lockTable = async () => {
    locker = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("lock table shared_t in access exclusive mode");
  };
  /** The backends waiting on a lock right now. */
  const waiting = async () =>
    (await observer.query("select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows.map(
      (r: { pid: number }) => r.pid,
    );

  /** A request's database: only requests' statements share connections. */
  const request = () => store.forRequest(new AbortController().signal).db;

  /** The shared connections' backends, once both are open (the first statements take pooled ones meanwhile). */
  async function sharedPids(): Promise<Set<number>> {
    let pids = new Set<number>();
    await until("both shared connections", async () => {
      // A connection that died before its client noticed fails a statement, once.
      pids = new Set(await Promise.all(Array.from({ length: 8 }, () => backendPid(request()))).catch(() => []));
      return pids.size === 2;
    });
    return pids;
  }

  it("runs concurrent statements outside transactions on the shared connections only, pipelined", async () => {
    const pids = await sharedPids();
    const seen = await Promise.all(Array.from({ length: 16 }, () => backendPid(request())));
    expect(new Set(seen)).toEqual(pids);
  });

  it("gives the process's own statements (no request: workers, sweepers) connections of their own", async () => {
    const pids = await sharedPids();
    const seen = await Promise.all(Array.from({ length: 4 }, () => backendPid(store.db)));
    for (const pid of seen) expect(pids.has(pid)).toBe(false);
  });

  it("takes a pooled connection for a statement when every shared one has its queue full", async () => {
    const pids = await sharedPids();
    // Each shared connection takes 8; the rest wait on pooled ones of their own.
    const seen = await Promise.all(
      Array.from({ length: 20 }, () => sql<{ pid: number }>`select pg_backend_pid() as pid from pg_sleep(0.05)`.execute(request()).then((r) => r.rows[0]!.pid)),
    );
    const others = seen.filter((pid) => !pids.has(pid));
    expect(others.length).toBe(4);
    expect(seen.filter((pid) => pids.has(pid)).length).toBe(16);
  });

  it("runs a transaction on a connection of its own, every statement of it on the same one", async () => {
    const pids = await sharedPids();
    const inside = await store.forRequest(new AbortController().signal).transact(async (tx) => [await backendPid(tx), await backendPid(tx)]);
    expect(inside[0]).toBe(inside[1]);
    expect(pids.has(inside[0]!)).toBe(false);
  });

  it("fails only the statement that failed: the others in flight on its connection get their answers", async () => {
    const pids = await sharedPids();
    const results = await Promise.allSettled([
      backendPid(request()),
      sql`select * from no_such_table`.execute(request()),
      sql<{ n: number }>`select n from shared_t where id = 'a'`.execute(request()).then((r) => r.rows[0]!.n),
      sql`select 1 / 0`.execute(request()),
      backendPid(request()),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "42P01" });
    expect((results[2] as PromiseFulfilledResult<number>).value).toBe(1);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: "22012" });
    // The connections stay: a statement's error is not a broken connection.
    expect(await sharedPids()).toEqual(pids);
  });

  it("answers an aborted request at once, cancels its statement on the server, and takes a new connection for what follows", async () => {
    const pids = await sharedPids();
    await lockTable();
    const controller = new AbortController();
    const stuck = sql`select n from shared_t`.execute(store.forRequest(controller.signal).db);
    await until("the statement waiting on the lock", async () => (await waiting()).length === 1);
    const [stuckPid] = await waiting();
    expect(pids.has(stuckPid!)).toBe(true);
    const started = performance.now();
    controller.abort();
    await expect(stuck).rejects.toThrow();
    // At once: not when the lock goes or the statement timeout (30 s) ends; the bound leaves room for a loaded machine's scheduling.
    expect(performance.now() - started).toBeLessThan(1_000);
    // Cancelled after the grace, not left waiting for the statement timeout (30 s here).
    await until("the statement cancelled", async () => (await waiting()).length === 0, 2_000);
    await locker!.query("rollback");
    // The connection that held it was closed; another shared one takes its place.
    const after = await sharedPids();
    expect(after.has(stuckPid!)).toBe(false);
    expect(await sql<{ n: number }>`select n from shared_t where id = 'b'`.execute(request()).then((r) => r.rows[0]!.n)).toBe(2);
  });

  describe("with one shared connection", () => {
    let single: Store;
    beforeAll(async () => {
      single = await openStore(database.target, { ...loadConfig({}).db, poolMax: 4, sharedConnections: 1, sharedQueueMax: 8, sharedSlowHeadMs: 10 });
    });
    afterAll(async () => {
      await single?.close();
    });
    it("queues nothing behind a statement that has run PLATFORM_DB_SHARED_SLOW_HEAD_MS: the next takes a pooled connection", async () => {
      const db = () => single.forRequest(new AbortController().signal).db;
      // The first statement opens the shared connection (and meanwhile takes a pooled one).
      await backendPid(db());
      await new Promise((resolve) => setTimeout(resolve, 100));
      const sharedPid = await backendPid(db());
      await lockTable();
      const stuck = sql`select n from shared_t`.execute(db());
      await until("the statement waiting on the lock", async () => (await waiting()).includes(sharedPid));
      // Past the 10 ms: a statement sent sooner would queue behind it, as it should.
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Not behind the stuck one: answered at once, by another backend.
      const behind = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("queued behind the stuck statement")), 2_000));
      const other = await Promise.race([backendPid(db()), behind]).finally(() => locker!.query("rollback"));
      expect(other).not.toBe(sharedPid);
      await stuck;
    });

    it("cancels every abandoned statement on its connection in turn, each as it becomes the one running", async () => {
      const first = new AbortController();
      const second = new AbortController();
      await backendPid(single.forRequest(new AbortController().signal).db);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await lockTable();
      // Sent in one turn: both on the one shared connection, the second behind the first.
      const a = sql`select n from shared_t where id = 'a'`.execute(single.forRequest(first.signal).db);
      const b = sql`select n from shared_t where id = 'b'`.execute(single.forRequest(second.signal).db);
      await until("the first waiting on the lock", async () => (await waiting()).length === 1);
      first.abort();
      second.abort();
      await expect(a).rejects.toThrow();
      await expect(b).rejects.toThrow();
      // Both cancelled, the second once the first's cancel made it the one running: no backend is left waiting.
      await until("both cancelled", async () => (await waiting()).length === 0, 3_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await waiting()).toEqual([]);
    });
  });

  it("replaces a shared connection whose backend was terminated", async () => {
    const pids = await sharedPids();
    await observer.query("select pg_terminate_backend(pid) from pg_stat_activity where pid = any($1::int[])", [[...pids]]);
    // A statement may meet a connection that died before its client noticed; then the next works.
    await backendPid(request()).catch(() => undefined);
    const after = await sharedPids();
    for (const pid of after) expect(pids.has(pid)).toBe(false);
  });

  it("runs a prepared statement again unprepared when its table changed shape under it, on a shared connection", async () => {
    await sharedPids();
    const all = prepared((db, p: { id: string }) =>
      db.withTables<{ shared_t: { id: string; n: number } }>().selectFrom("shared_t").selectAll().where("id", "=", p.id),
    );
    // Prepared on both shared connections.
    await Promise.all(Array.from({ length: 8 }, () => all(request(), { id: "a" })));
    await sql`alter table shared_t add column extra int`.execute(store.db);
    const rows = await Promise.all(Array.from({ length: 8 }, () => all(request(), { id: "a" })));
    for (const r of rows) expect(r).toEqual([{ id: "a", n: 1, extra: null }]);
  });
});
