import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Every write appends its events and updates its projection in one transaction: a command
 * that fails midway leaves no trace, concurrent commands on one aggregate all apply in
 * order, and a cascade (DeleteTarget -> executions) is atomic and recorded as events.
 */

const idOf = (r: CallResult) => (r as unknown as { message: { details: { id: string } } }).message.details.id;
const webhook = (name: string, extra: JsonObject = {}) => ({ target: { name, restWebhook: { url: "https://example.invalid/c" }, ...extra } });

describe.each(DATABASE_KINDS)("consistency of PlatformActions writes (%s)", (kind) => {
  let server: TestServer;
  const db = () => server.service.store.db;
  const client = (p: Protocol = "grpc") => protocolClient(PlatformActions, p, server.baseUrl);
  const call = (method: string, req: JsonObject, p: Protocol = "grpc") => client(p).call(method, req, server.adminToken);

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** Row counts of the event log and both projections, and the projections' contents. */
  async function snapshot() {
    const count = async (table: "events" | "targets" | "executions") =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      events: await count("events"),
      targets: await count("targets"),
      executions: await count("executions"),
      targetRows: await db().selectFrom("targets").select(["id", "name", "sequence", "timeout_ms"]).orderBy("id").execute(),
      executionRows: await db().selectFrom("executions").select(["id", "targets", "includes", "sequence"]).orderBy("id").execute(),
    };
  }

  async function createTarget(name: string): Promise<string> {
    const created = await call("CreateTarget", webhook(name));
    expect(created, name).toMatchObject({ ok: true });
    return idOf(created);
  }

  async function eventsOf(type: string, id: string) {
    return db()
      .selectFrom("events")
      .select(["sequence", "event_type"])
      .where("aggregate_type", "=", type)
      .where("aggregate_id", "=", id)
      .orderBy("sequence")
      .execute();
  }

  /** Each projection row carries the sequence of its aggregate's newest event. */
  async function expectProjectionsMatchEvents() {
    for (const [table, type] of [
      ["targets", "target"],
      ["executions", "execution"],
    ] as const) {
      const rows = await db().selectFrom(table).select(["id", "sequence"]).execute();
      for (const row of rows) {
        const events = await eventsOf(type, row.id);
        expect(
          events.map((e) => e.sequence),
          `${type} ${row.id}`,
        ).toEqual(events.map((_, i) => i + 1));
        expect(row.sequence, `${type} ${row.id}`).toBe(events.at(-1)?.sequence);
      }
    }
  }

  it("records every successful write as an event in step with its projection", async () => {
    const before = await snapshot();
    const id = await createTarget("consistency-log");
    expect(await call("PatchTarget", { id, target: { timeout: "4s" } })).toMatchObject({ ok: true });
    expect(await call("PutExecution", { execution: { condition: { event: { event: "user.added" } }, targets: [id] } })).toMatchObject({ ok: true });
    const after = await snapshot();
    expect(after.events).toBe(before.events + 3);
    expect(after.targets).toBe(before.targets + 1);
    expect(after.executions).toBe(before.executions + 1);
    expect((await eventsOf("target", id)).map((e) => e.event_type)).toEqual(["target.added", "target.changed"]);
    expect((await eventsOf("execution", "event/user.added")).map((e) => e.event_type)).toEqual(["execution.set"]);
    await expectProjectionsMatchEvents();
  });

  describe("a failing command writes nothing", () => {
    let existing: string;
    let other: string;
    beforeAll(async () => {
      existing = await createTarget("consistency-existing");
      other = await createTarget("consistency-other");
      expect(await call("PutExecution", { execution: { condition: { function: "preaccesstoken" }, targets: [existing] } })).toMatchObject({ ok: true });
      expect(
        await call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [other], includes: ["function/preaccesstoken"] } }),
      ).toMatchObject({ ok: true });
    });

    const SERVICE = "platform.resources.action.v3alpha.PlatformActions";
    /** Label, code, REST status, what the message must name (the real reason), request. */
    const failures: [string, Code, number, RegExp, () => [string, JsonObject]][] = [
      ["CreateTarget with a duplicate name", Code.AlreadyExists, 409, /consistency-existing/, () => ["CreateTarget", webhook("consistency-existing")]],
      [
        "PatchTarget renaming onto another target's name",
        Code.AlreadyExists,
        409,
        /consistency-existing/,
        () => ["PatchTarget", { id: other, target: { name: "consistency-existing", timeout: "2s" } }],
      ],
      ["PatchTarget of a missing target", Code.NotFound, 404, /missing-target/, () => ["PatchTarget", { id: "missing-target", target: { timeout: "2s" } }]],
      ["DeleteTarget of a missing target", Code.NotFound, 404, /missing-target/, () => ["DeleteTarget", { id: "missing-target" }]],
      [
        "PutExecution creating one with an existing and a missing target",
        Code.NotFound,
        404,
        /missing-target/,
        () => ["PutExecution", { execution: { condition: { request: { service: SERVICE } }, targets: [existing, "missing-target"] } }],
      ],
      [
        "PutExecution of a new event execution with an existing and a missing target",
        Code.NotFound,
        404,
        /missing-target/,
        () => ["PutExecution", { execution: { condition: { event: { event: "user.removed" } }, targets: [existing, "missing-target"] } }],
      ],
      [
        "PutExecution updating one with an existing and a missing target",
        Code.NotFound,
        404,
        /missing-target/,
        () => ["PutExecution", { execution: { condition: { function: "preaccesstoken" }, targets: [existing, "missing-target"] } }],
      ],
      [
        "PutExecution creating an include cycle",
        Code.FailedPrecondition,
        400,
        /cycle/,
        () => ["PutExecution", { execution: { condition: { function: "preaccesstoken" }, targets: [existing], includes: ["function/preuserinfo"] } }],
      ],
      [
        "PutExecution including itself",
        Code.FailedPrecondition,
        400,
        /cycle/,
        () => ["PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [other], includes: ["function/preuserinfo"] } }],
      ],
      [
        "PutExecution including a missing execution",
        Code.NotFound,
        404,
        /function\/nothing/,
        () => ["PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [other], includes: ["function/nothing"] } }],
      ],
      ["DeleteExecution of a missing execution", Code.NotFound, 404, /event\/nothing\.happened/, () => ["DeleteExecution", { id: "event/nothing.happened" }]],
    ];

    it.each(failures)("%s", async (_label, code, status, reason, request) => {
      const [method, req] = request();
      for (const protocol of ["grpc", "rest"] as const) {
        const before = await snapshot();
        const result = await call(method, req, protocol);
        expect(result, protocol).toMatchObject({ ok: false, code });
        expect((result as { message: string }).message, protocol).toMatch(reason);
        if (protocol === "rest") expect(result.httpStatus).toBe(status);
        expect(await snapshot(), protocol).toEqual(before);
      }
      await expectProjectionsMatchEvents();
    });
  });

  it("applies two concurrent patches of different fields of one target, both, in sequence", async () => {
    const id = await createTarget("consistency-concurrent");
    const [a, b] = await Promise.all([
      call("PatchTarget", { id, target: { name: "consistency-concurrent-renamed" } }),
      call("PatchTarget", { id, target: { timeout: "42s" } }),
    ]);
    expect(a).toMatchObject({ ok: true });
    expect(b).toMatchObject({ ok: true });
    const sequences = [a, b].map((r) => (r as unknown as { message: { details: { sequence: string } } }).message.details.sequence).sort();
    expect(sequences).toEqual(["2", "3"]);
    const got = await call("GetTarget", { id });
    expect(got).toMatchObject({
      ok: true,
      message: { target: { details: { sequence: "3" }, target: { name: "consistency-concurrent-renamed", timeout: "42s" } } },
    });
    const events = await eventsOf("target", id);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(events.map((e) => e.event_type)).toEqual(["target.added", "target.changed", "target.changed"]);
  });

  it("creates 20 targets concurrently, each with its own id and event", async () => {
    const before = await snapshot();
    const names = Array.from({ length: 20 }, (_, i) => `consistency-burst-${i}`);
    const results = await Promise.all(names.map((n, i) => call("CreateTarget", webhook(n), i % 2 ? "grpc" : "rest")));
    for (const [i, r] of results.entries()) expect(r, names[i]).toMatchObject({ ok: true });
    const ids = results.map(idOf);
    expect(new Set(ids).size).toBe(20);
    const after = await snapshot();
    expect(after.targets).toBe(before.targets + 20);
    expect(after.events).toBe(before.events + 20);
    const found = await call("SearchTargets", { filters: [{ inIds: { ids } }], query: { limit: 100 } });
    expect(found).toMatchObject({ ok: true, message: { details: { totalResult: "20" } } });
    const listed = (found as unknown as { message: { result: { details: { id: string }; target: { name: string } }[] } }).message.result;
    expect(new Map(listed.map((t) => [t.details.id, t.target.name]))).toEqual(new Map(ids.map((id, i) => [id, names[i]])));
    await expectProjectionsMatchEvents();
  });

  describe("races between writers leave one consistent outcome", () => {
    it("lets exactly one of five concurrent creates of one name win; the losers leave no event", async () => {
      const before = await snapshot();
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => call("CreateTarget", webhook("consistency-race"), i % 2 ? "grpc" : "rest")));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      for (const r of results.filter((r) => !r.ok)) expect(r).toMatchObject({ code: Code.AlreadyExists });
      const after = await snapshot();
      expect(after.targets).toBe(before.targets + 1);
      expect(after.events).toBe(before.events + 1);
      await expectProjectionsMatchEvents();
    });

    it("lets exactly one of two concurrent renames onto one free name win", async () => {
      const [x, y] = [await createTarget("consistency-rename-x"), await createTarget("consistency-rename-y")];
      const before = await snapshot();
      const results = await Promise.all([x, y].map((id) => call("PatchTarget", { id, target: { name: "consistency-rename-both" } })));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toMatchObject({ code: Code.AlreadyExists });
      const after = await snapshot();
      expect(after.events).toBe(before.events + 1);
      expect(after.targetRows.filter((t) => t.name === "consistency-rename-both")).toHaveLength(1);
      await expectProjectionsMatchEvents();
    });

    it("deletes a target once when two deletes race; the other is NotFound", async () => {
      const id = await createTarget("consistency-double-delete");
      const results = await Promise.all([call("DeleteTarget", { id }), call("DeleteTarget", { id }, "rest")]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toMatchObject({ code: Code.NotFound });
      expect((await eventsOf("target", id)).map((e) => e.event_type)).toEqual(["target.added", "target.removed"]);
    });

    it("serialises concurrent puts of one new condition: one creates, the other updates", async () => {
      const [x, y] = [await createTarget("consistency-put-x"), await createTarget("consistency-put-y")];
      const condition = { event: { event: "org.added" } };
      const results = await Promise.all([x, y].map((t) => call("PutExecution", { execution: { condition, targets: [t] } })));
      for (const r of results) expect(r).toMatchObject({ ok: true });
      expect(results.map((r) => Boolean((r as unknown as { message: { created?: boolean } }).message.created)).sort()).toEqual([false, true]);
      expect((await eventsOf("execution", "event/org.added")).map((e) => e.sequence)).toEqual([1, 2]);
      await expectProjectionsMatchEvents();
    });

    it("never lets two concurrent puts close an include cycle", async () => {
      const t = await createTarget("consistency-cycle-race");
      for (const event of ["a.one", "a.two"])
        expect(await call("PutExecution", { execution: { condition: { event: { event } }, targets: [t] } })).toMatchObject({ ok: true });
      const results = await Promise.all([
        call("PutExecution", { execution: { condition: { event: { event: "a.one" } }, targets: [t], includes: ["event/a.two"] } }),
        call("PutExecution", { execution: { condition: { event: { event: "a.two" } }, targets: [t], includes: ["event/a.one"] } }, "rest"),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toMatchObject({ code: Code.FailedPrecondition });
      const rows = (await snapshot()).executionRows.filter((e) => e.id === "event/a.one" || e.id === "event/a.two");
      expect(rows.filter((e) => e.includes.length > 0)).toHaveLength(1);
    });

    it("leaves no execution pointing at a target deleted while a put referenced it", async () => {
      for (let round = 0; round < 5; round++) {
        const t = await createTarget(`consistency-dangling-${round}`);
        const [put, del] = await Promise.all([
          call("PutExecution", { execution: { condition: { event: { event: `dangling.${round}` } }, targets: [t] } }),
          call("DeleteTarget", { id: t }),
        ]);
        expect(del, `round ${round}`).toMatchObject({ ok: true });
        if (!put.ok) expect(put, `round ${round}`).toMatchObject({ code: Code.NotFound });
        const { targetRows, executionRows } = await snapshot();
        const live = new Set(targetRows.map((r) => r.id));
        for (const e of executionRows) for (const ref of e.targets) expect(live.has(ref), `${e.id} -> ${ref}`).toBe(true);
      }
      await expectProjectionsMatchEvents();
    });
  });

  it("removes a deleted target from every execution atomically, recording execution.set", async () => {
    const doomed = await createTarget("consistency-doomed");
    const kept = await createTarget("consistency-kept");
    const put = await call("PutExecution", { execution: { condition: { event: { group: "session" } }, targets: [doomed, kept] } });
    expect(put).toMatchObject({ ok: true, message: { details: { sequence: "1" } } });
    const executionId = idOf(put);
    const other = await call("PutExecution", { execution: { condition: { request: { all: true } }, targets: [doomed] } });
    expect(other).toMatchObject({ ok: true });
    const before = await snapshot();

    expect(await call("DeleteTarget", { id: doomed }, "rest")).toMatchObject({ ok: true, httpStatus: 200 });
    const after = await snapshot();
    expect(after.targets).toBe(before.targets - 1);
    expect(after.executions).toBe(before.executions);
    // One target.removed plus one execution.set per execution that lost the target.
    expect(after.events).toBe(before.events + 3);
    expect(await eventsOf("target", doomed)).toEqual([
      { sequence: 1, event_type: "target.added" },
      { sequence: 2, event_type: "target.removed" },
    ]);
    for (const id of [executionId, idOf(other)]) {
      const events = await eventsOf("execution", id);
      expect(
        events.map((e) => e.event_type),
        id,
      ).toEqual(["execution.set", "execution.set"]);
    }
    const search = await call("SearchExecutions", { filters: [{ inConditions: { conditions: [{ event: { group: "session" } }] } }] });
    expect(search).toMatchObject({ ok: true, message: { result: [{ details: { id: executionId, sequence: "2" }, execution: { targets: [kept] } }] } });
    const emptied = await call("SearchExecutions", { filters: [{ target: { id: doomed } }] });
    expect((emptied as unknown as { message: { result?: unknown[] } }).message.result ?? []).toEqual([]);
    await expectProjectionsMatchEvents();
  });
});
