import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOutbox } from "../../src/engines/actions/outbox.js";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { commitWith } from "../../src/store/deferred.js";
import { queueEvents } from "../../src/store/append.js";
import type { Tx } from "../../src/store/db.js";
import { eventTime } from "../../src/store/event-reads.js";
import { createInstanceSequence } from "../../src/store/instance-sequence.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/database.js";

/**
 * A write in one round trip (store/deferred.ts: commitWith; store/append.ts:
 * queueEvents): its events queued, its last statement sent with the commit. On PGlite the
 * same calls run one by one; the outcome must be the same on both. One pooled connection,
 * so every case also shows that the connection is left clean for the next, and on
 * PostgreSQL that it was kept rather than replaced (its backend's pid). The action
 * engine's outbox is the append hook, as in the service.
 */
describe.each(DATABASE_KINDS)("queued appends and commitWith (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;
  /** Statements as the store ran them, in order. */
  const seen: string[] = [];
  let instanceId: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 }, undefined, (statement) => {
      seen.push(statement);
      return undefined;
    });
    if (kind === "postgres") await migrateToLatest(store.db);
    installOutbox();
    await sql`create table queued_t (id text primary key, created_at timestamptz not null, parent text references queued_t (id) deferrable initially deferred)`.execute(
      store.db,
    );
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    instanceId = randomUUID();
    await store.transact((tx) => createInstanceSequence(tx, instanceId));
    await sql`delete from queued_t`.execute(store.db);
    seen.length = 0;
  });

  const aggregate = (id: string) => ({ instanceId, type: "queued", id });
  const events = async (id: string) =>
    (
      await sql<{
        sequence: number;
        event_type: string;
        created_at: Date;
      }>`select sequence, event_type, created_at from events where instance_id = ${instanceId} and aggregate_id = ${id} order by sequence`.execute(store.db)
    ).rows;
  const rows = async () => (await sql<{ id: string; created_at: Date }>`select id, created_at from queued_t order by id`.execute(store.db)).rows;
  let backend: number | undefined;
  /** Fails on a connection left inside a transaction block (VACUUM cannot run in one), or replaced since the last call. */
  const outsideTransaction = async () => {
    await sql`vacuum queued_t`.execute(store.db);
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)).rows[0]!.pid;
    if (kind === "postgres" && backend !== undefined) expect(pid).toBe(backend);
    backend = pid;
  };
  /** A write as a command makes one: two events queued, then its row sent with the commit. */
  const write = async (tx: Tx, id: string, parent: string | null = null) => {
    const { sequence } = await queueEvents(
      tx,
      aggregate(id),
      0,
      [
        { type: "queued.added", payload: { id } },
        { type: "queued.named", payload: {} },
      ],
      { userId: "tester" },
    );
    const { rows } = await commitWith<{ created_at: Date }>(
      tx,
      sql`insert into queued_t values (${id}, ${eventTime(instanceId, "queued", id, sequence)}, ${parent}) returning created_at`.compile(tx),
    );
    return { sequence, createdAt: rows[0]!.created_at };
  };
  const refusals = () => seen.filter((s) => s.includes("refuse_queued_append")).length;

  it("commits the events and the row, which reads its time from its event and answers it", async () => {
    const written = await store.transact((tx) => write(tx, "a"));
    expect(written.sequence).toBe(2);
    const [added, named] = await events("a");
    expect([added?.event_type, named?.event_type]).toEqual(["queued.added", "queued.named"]);
    expect(written.createdAt).toEqual(named!.created_at);
    expect(await rows()).toEqual([{ id: "a", created_at: named!.created_at }]);
    // Kept in milliseconds, as the API answers times and as every other projection keeps them.
    expect((await sql<{ sub: number }>`select (extract(microseconds from created_at)::int % 1000) as sub from queued_t`.execute(store.db)).rows).toEqual([
      { sub: 0 },
    ]);
    expect(refusals()).toBe(1);
    await outsideTransaction();
  });

  it("fails with the last statement's error, and the queued events roll back with it", async () => {
    await store.transact((tx) => write(tx, "b"));
    await outsideTransaction();
    await expect(store.transact((tx) => write(tx, "b"))).rejects.toMatchObject({ code: "23505" });
    expect(await events("b")).toHaveLength(2);
    expect(await rows()).toHaveLength(1);
    await outsideTransaction();
  });

  it("fails with the commit's own error (a deferred constraint), committing nothing", async () => {
    await outsideTransaction();
    await expect(store.transact((tx) => write(tx, "c", "nobody"))).rejects.toMatchObject({ code: "23503" });
    expect(await events("c")).toEqual([]);
    expect(await rows()).toEqual([]);
    await outsideTransaction();
  });

  it("refuses a statement after the last one: the caller hears of it, and what was committed stays", async () => {
    await outsideTransaction();
    const late = store.transact(async (tx) => {
      await write(tx, "d");
      await sql`select 1`.execute(tx);
    });
    await expect(late).rejects.toThrow(/committed with its last statement/);
    expect(await events("d")).toHaveLength(2);
    expect(await rows()).toHaveLength(1);
    await outsideTransaction();
    expect((await store.transact((tx) => write(tx, "e"))).sequence).toBe(2);
  });

  it("writes the slow way where the hooks have work: refused once, run again with the hooks, and queued again once they have none", async () => {
    await sql`insert into executions (instance_id, id, created_at, change_date, sequence, condition_type, targets, includes)
      values (${instanceId}, 'event', now(), now(), 1, 'event', '["target-1"]'::jsonb, '[]'::jsonb)`.execute(store.db);
    let attempts = 0;
    await store.transact((tx) => {
      attempts++;
      return write(tx, "f");
    });
    expect(attempts).toBe(2);
    expect(await events("f")).toHaveLength(2);
    const deliveries = await sql<{
      event_type: string;
      target_id: string;
    }>`select event_type, target_id from action_deliveries where instance_id = ${instanceId} order by event_sequence`.execute(store.db);
    expect(deliveries.rows).toEqual([
      { event_type: "queued.added", target_id: "target-1" },
      { event_type: "queued.named", target_id: "target-1" },
    ]);

    // The instance's writes now wait for their inserts: no refusal, no second attempt.
    seen.length = 0;
    attempts = 0;
    await store.transact((tx) => {
      attempts++;
      return write(tx, "g");
    });
    expect([attempts, refusals()]).toEqual([1, 0]);
    expect((await sql`select 1 from action_deliveries where instance_id = ${instanceId}`.execute(store.db)).rows).toHaveLength(4);

    // Without event executions, the next write finds the hooks idle, and the one after queues again.
    await sql`delete from executions where instance_id = ${instanceId}`.execute(store.db);
    await store.transact((tx) => write(tx, "h"));
    seen.length = 0;
    await store.transact((tx) => write(tx, "i"));
    expect(refusals()).toBe(1);
    expect(await rows()).toHaveLength(4);
    await outsideTransaction();
  });
});
