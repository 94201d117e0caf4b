import { sql, type Kysely } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openStore, type Store } from "../../src/store/database.js";
import { StatementQuery } from "../../src/store/pg/query.js";
import { prepared, statementName } from "../../src/store/prepared.js";
import type { Database } from "../../src/store/schema.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/database.js";

/** The table this test creates, which the schema's types do not describe. */
const withTestTable = (db: Kysely<Database>) => db.withTables<{ prepared_t: { instance_id: string; id: string; kind: string; n: number } }>();

/**
 * Queries compiled once (store/prepared.ts): each call runs with its own values, constants of
 * the built query stay, and on PostgreSQL the statement is prepared once per connection.
 */
describe.each(DATABASE_KINDS)("prepared queries (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 });
    await sql`create table prepared_t (instance_id text not null, id text not null, kind text not null, n int not null)`.execute(store.db);
    await sql`insert into prepared_t values ('i1', 'a', 'x', 1), ('i1', 'b', 'y', 2), ('i2', 'a', 'x', 3)`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  // The table is not in the schema's types: this test only needs the SQL.
  const byKey = prepared((db, p: { instanceId: string; id: string }) =>
    withTestTable(db).selectFrom("prepared_t").select(["id", "n"]).where("instance_id", "=", p.instanceId).where("id", "=", p.id).where("kind", "=", "x"),
  );

  it("runs each call with its values and keeps the built query's constants", async () => {
    expect(await byKey(store.db, { instanceId: "i1", id: "a" })).toEqual([{ id: "a", n: 1 }]);
    expect(await byKey(store.db, { instanceId: "i2", id: "a" })).toEqual([{ id: "a", n: 3 }]);
    // Kind "y": the constant "x" of the query still applies.
    expect(await byKey(store.db, { instanceId: "i1", id: "b" })).toEqual([]);
    expect(await byKey(store.forRequest(new AbortController().signal).db, { instanceId: "i1", id: "a" })).toEqual([{ id: "a", n: 1 }]);
  });

  it("names the statement, so that PostgreSQL prepares it once per connection", async () => {
    const text = `select "id", "n" from "prepared_t" where "instance_id" = $1 and "id" = $2 and "kind" = $3`;
    const name = statementName(text);
    expect(name).toMatch(/^prepared_\d+$/);
    if (database.target.kind !== "postgres") return;
    await byKey(store.db, { instanceId: "i1", id: "a" });
    // The pool's one connection: the statement is prepared in its session under that name.
    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(store.db);
    expect(rows).toContainEqual({ name, statement: text });
  });

  it("survives its table changing shape (a migration of a newer version beside it): the statement runs again unprepared", async () => {
    const all = prepared((db, p: { id: string }) =>
      withTestTable(db).selectFrom("prepared_t").selectAll().where("instance_id", "=", "i1").where("id", "=", p.id),
    );
    expect(await all(store.db, { id: "a" })).toEqual([{ instance_id: "i1", id: "a", kind: "x", n: 1 }]);
    await sql`alter table prepared_t add column extra int`.execute(store.db);
    expect(await all(store.db, { id: "a" })).toEqual([{ instance_id: "i1", id: "a", kind: "x", n: 1, extra: null }]);
    expect(await all(store.db, { id: "none" })).toEqual([]);
  });

  it("refuses a parameter used where it would become SQL text", async () => {
    const bad = prepared((db, p: { column: string }) => withTestTable(db).selectFrom("prepared_t").select(sql.ref(p.column).as("c")));
    await expect(bad(store.db, { column: "id" })).rejects.toThrow(/took a parameter into its SQL/);
  });
});

/**
 * Statements the service runs often are prepared without being written with prepared()
 * (store/pg/statement-names.ts, used by both drivers; PGlite is one session, whose
 * pg_prepared_statements this reads): after their third run, up to
 * PLATFORM_DB_PREPARED_STATEMENTS_MAX texts.
 */
describe.each(DATABASE_KINDS)("statements prepared once they run often (%s)", (kind) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await database?.drop();
  });

  const preparedTexts = async (store: Store) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements where name like 'auto_%'`.execute(store.db)).rows.map((r) => r.statement);

  it("prepares a parameterized statement from its third run on, never one without parameters, and none past the limit", async () => {
    const store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1, preparedStatementsMax: 1 });
    try {
      const often = (n: number) => sql<{ n: number }>`select ${n}::int + 1 as n, 'often' as tag`.execute(store.db);
      for (let n = 1; n <= 2; n++) expect((await often(n)).rows).toEqual([{ n: n + 1, tag: "often" }]);
      expect(await preparedTexts(store)).toEqual([]);
      for (let n = 3; n <= 5; n++) expect((await often(n)).rows).toEqual([{ n: n + 1, tag: "often" }]);
      expect(await preparedTexts(store)).toEqual([`select $1::int + 1 as n, 'often' as tag`]);
      // The one name is taken: another text runs unnamed however often.
      for (let n = 0; n < 5; n++) await sql`select ${n}::int as other`.execute(store.db);
      for (let n = 0; n < 5; n++) await sql`select 'no parameters' as constant`.execute(store.db);
      expect(await preparedTexts(store)).toEqual([`select $1::int + 1 as n, 'often' as tag`]);
    } finally {
      await store.close();
    }
  });

  it("prepares nothing of its own with the limit at 0", async () => {
    const store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1, preparedStatementsMax: 0 });
    try {
      for (let n = 0; n < 5; n++) await sql`select ${n}::int as zero_limit`.execute(store.db);
      expect(await preparedTexts(store)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

/**
 * A named statement's rows (store/pg/query.ts): described by the server at its first run on a
 * connection, executed without a Describe after that, each row parsed by its column's type.
 */
describe.each(DATABASE_KINDS.filter((kind) => kind === "postgres"))("rows of a named statement (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const getTypeParser = pg.types.getTypeParser;
  const unparsable = (): never => {
    throw new Error("unparsable");
  };

  const typed = prepared((db, p: { n: number; at: string | null }) =>
    db.selectNoFrom([
      sql<number>`${p.n}::int`.as("n"),
      sql<Date | null>`${p.at}::timestamptz`.as("at"),
      sql<unknown>`jsonb_build_object('n', ${p.n}::int)`.as("doc"),
      sql<boolean>`${p.n}::int > 1`.as("big"),
      sql<string | null>`nullif('text', ${p.n}::text)`.as("maybe"),
      sql<number>`10 / ${p.n}::int`.as("tenth"),
      // The pool's own parsers (store/database.ts): int8 as a number.
      sql<number>`${p.n}::int8 * 1000000000`.as("large"),
    ]),
  );

  it("parses every run's row by its columns' types, in column order, with the Describe sent only at the first run", async () => {
    const descriptions = vi.spyOn(StatementQuery.prototype, "handleRowDescription");
    const at = "2026-11-27T10:00:00.123Z";
    for (let n = 1; n <= 4; n++) {
      const rows = await typed(store.db, { n, at: n % 2 ? at : null });
      expect(rows).toEqual([{ n, at: n % 2 ? new Date(at) : null, doc: { n }, big: n > 1, maybe: "text", tenth: Math.trunc(10 / n), large: n * 1e9 }]);
      expect(Object.keys(rows[0]!)).toEqual(["n", "at", "doc", "big", "maybe", "tenth", "large"]);
    }
    expect(descriptions).toHaveBeenCalledTimes(1);
  });

  it("keeps the connection and the statement usable after a run that failed on the server", async () => {
    await typed(store.db, { n: 2, at: null });
    await expect(typed(store.db, { n: 0, at: null })).rejects.toMatchObject({ code: "22012" });
    expect(await typed(store.db, { n: 5, at: null })).toEqual([{ n: 5, at: null, doc: { n: 5 }, big: true, maybe: "text", tenth: 2, large: 5e9 }]);
  });

  it("fails a run whose value cannot be bound once the shape is known, and the next run on the connection answers", async () => {
    await typed(store.db, { n: 2, at: null });
    const unbindable = {
      toPostgres: () => {
        throw new Error("cannot bind");
      },
    };
    await expect(typed(store.db, { n: unbindable as never, at: null })).rejects.toThrow("cannot bind");
    expect(await typed(store.db, { n: 10, at: null })).toEqual([{ n: 10, at: null, doc: { n: 10 }, big: true, maybe: "text", tenth: 1, large: 10e9 }]);
  });

  it("keeps a column named __proto__ as a column, as pg does", async () => {
    const odd = prepared((db, p: { n: number }) => db.selectNoFrom([sql<number>`${p.n}::int`.as("n"), sql<string>`'kept'`.as("__proto__")]));
    for (let n = 0; n < 3; n++) {
      const [row] = await odd(store.db, { n });
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(row, "__proto__")?.value).toBe("kept");
      expect((row as { n: number }).n).toBe(n);
    }
  });

  it("gives a failed column parse as the statement's error, and the connection runs the next one", async () => {
    // The int parser this statement's shape takes at its first run (the pool's parsers defer
    // to pg's for int4), failing for one value.
    const intParser = pg.types.getTypeParser(23, "text");
    vi.spyOn(pg.types, "getTypeParser").mockImplementation((oid: number, format?: string) =>
      oid === 23 ? (text: string) => (text === "13" ? unparsable() : intParser(text)) : (Reflect.apply(getTypeParser, pg.types, [oid, format]) as never),
    );
    const counted = prepared((db, p: { n: number }) => db.selectNoFrom([sql<number>`${p.n}::int`.as("counted")]));
    expect(await counted(store.db, { n: 12 })).toEqual([{ counted: 12 }]);
    await expect(counted(store.db, { n: 13 })).rejects.toThrow("unparsable");
    expect(await counted(store.db, { n: 14 })).toEqual([{ counted: 14 }]);
  });
});

/**
 * Values and failures of statements, prepared or not, alike on both databases: PGlite's
 * driver (store/pglite/statements.ts) sends values as pg's prepareValue makes them, so a
 * value means on PGlite what it means on PostgreSQL.
 */
describe.each(DATABASE_KINDS)("statement values and failures (%s)", (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openStore(database.target, { ...loadConfig({}).db, poolMax: 1 });
    await sql`create table values_t (id int primary key, at timestamptz, bytes bytea, tags text[], doc jsonb, flag boolean, big int8, label text)`.execute(
      store.db,
    );
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const tableOf = (db: Kysely<Database>) =>
    db.withTables<{
      values_t: {
        id: number;
        at: Date | null;
        bytes: Buffer | null;
        tags: string[] | null;
        doc: unknown;
        flag: boolean | null;
        big: number | null;
        label: string | null;
      };
    }>();

  it("round-trips dates, bytes, arrays, JSON, booleans, large integers, text and nulls, unnamed and once prepared", async () => {
    // Five runs of one text: the first two unnamed, the rest prepared.
    for (let id = 1; id <= 5; id++) {
      const row = {
        id,
        at: new Date(Date.UTC(2026, 11, 7, 22, 0, id, 123)),
        bytes: Buffer.from([0, 1, 2, 255, id]),
        tags: ["a", 'qu"ote', "com,ma", "ünï"],
        // An object (pg's prepareValue writes it as JSON) or JSON text.
        doc: id % 2 ? { id, nested: { list: [1, "two", null] } } : JSON.stringify({ id }),
        flag: id % 2 === 0,
        big: 2 ** 40 + id,
        label: id === 3 ? null : `label ${id} \\ 'single'`,
      };
      await tableOf(store.db).insertInto("values_t").values(row).execute();
      const read = await tableOf(store.db).selectFrom("values_t").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      // Bytes come back as a Buffer from pg, a Uint8Array from PGlite.
      expect({ ...read, bytes: Buffer.from(read.bytes!) }).toEqual({ ...row, doc: typeof row.doc === "string" ? JSON.parse(row.doc) : row.doc });
    }
    const flagged = await tableOf(store.db)
      .selectFrom("values_t")
      .select("id")
      .where("tags", "@>", sql<string[]>`${["ünï"]}`)
      .where("flag", "=", true)
      .orderBy("id")
      .execute();
    expect(flagged.map((r) => r.id)).toEqual([2, 4]);
  });

  it("answers a text that does not parse with its syntax error every time, and runs the next statement", async () => {
    for (let n = 0; n < 4; n++) {
      await expect(sql`selec ${n}::int`.execute(store.db)).rejects.toMatchObject({ code: "42601" });
      expect((await sql<{ n: number }>`select ${n}::int as n`.execute(store.db)).rows).toEqual([{ n }]);
    }
  });

  it("keeps a prepared statement usable after a run that failed, in and out of transactions", async () => {
    const tenth = (n: number) => sql<{ t: number }>`select 10 / ${n}::int as t`.execute(store.db);
    for (let n = 1; n <= 4; n++) expect((await tenth(n)).rows).toEqual([{ t: Math.trunc(10 / n) }]);
    await expect(tenth(0)).rejects.toMatchObject({ code: "22012" });
    await expect(
      store.db.transaction().execute(async (tx) => {
        await sql`select 10 / ${2}::int`.execute(tx);
        await sql`select 10 / ${0}::int`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: "22012" });
    expect((await tenth(5)).rows).toEqual([{ t: 2 }]);
  });

  it("runs a statement whose table changed shape inside a transaction again once that transaction is over", async () => {
    await sql`create table shape_t (id int)`.execute(store.db);
    await sql`insert into shape_t values (1)`.execute(store.db);
    const all = (db: Kysely<Database>, id: number) => sql<Record<string, unknown>>`select * from shape_t where id = ${id}`.execute(db);
    for (let n = 0; n < 4; n++) expect((await all(store.db, 1)).rows).toEqual([{ id: 1 }]);
    await sql`alter table shape_t add column extra int`.execute(store.db);
    // Inside a transaction the stale plan fails it (the transaction is aborted); afterwards the text runs.
    await expect(store.db.transaction().execute((tx) => all(tx, 1))).rejects.toMatchObject({ code: "0A000" });
    expect((await all(store.db, 1)).rows).toEqual([{ id: 1, extra: null }]);
  });
});
