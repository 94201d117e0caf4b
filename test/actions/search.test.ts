import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, listDetails, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";

type Mode = "sync" | "async" | "interrupt";
interface Spec {
  name: string;
  kind: "restWebhook" | "restRequestResponse";
  url: string;
  timeoutS: number;
  mode: Mode;
}
interface Made extends Spec {
  id: string;
  created: number;
  changed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Names and URLs differ first at a lowercase letter, so every collation orders them alike. */
const WORDS = ["kilo", "echo", "lima", "alfa", "hotel", "bravo", "juliett", "delta", "india", "golf", "charlie", "foxtrot"];
const HOSTS = ["papa", "zulu", "mike", "oscar", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray"];
const TIMEOUTS = [9, 2, 11, 0.5, 7, 4, 12, 1, 10, 3, 8, 6];
const MODES: Mode[] = ["sync", "async", "interrupt"];
const SPECS: Spec[] = WORDS.map((w, i) => ({
  name: `srt${w}`,
  kind: i % 3 === 1 ? "restRequestResponse" : "restWebhook",
  url: `https://${HOSTS[(i * 5) % 12]}.example.org/hook`,
  timeoutS: TIMEOUTS[i]!,
  mode: MODES[((i * 7) % 4) % 3]!,
}));
/** Targets whose signing key is regenerated after all were created, in this order. */
const PATCHED = [5, 1, 9];

function targetJson(s: Spec): JsonObject {
  return {
    name: s.name,
    [s.kind]: { url: s.url },
    timeout: `${s.timeoutS}s`,
    ...(s.mode === "async" && { isAsync: true }),
    ...(s.mode === "interrupt" && { interruptOnError: true }),
  };
}

const ids = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.details.id);
const cmp = (a: string | number | boolean, b: string | number | boolean) => (a < b ? -1 : a > b ? 1 : 0);
/** Ascending by the key, ties by id: the descending order is the exact reverse. */
const sortedBy = (made: Made[], key: (t: Made) => string | number | boolean) =>
  [...made].sort((a, b) => cmp(key(a), key(b)) || cmp(a.id, b.id)).map((t) => t.id);

describe.each(DATABASE_KINDS)("searching targets and executions (%s)", (kind) => {
  let server: TestServer;
  const made: Made[] = [];
  let allIds: string[] = [];
  const client = (p: Protocol = "grpc") => protocolClient(PlatformActions, p, server.baseUrl);
  const call = (method: string, req: JsonObject, p: Protocol = "grpc") => client(p).call(method, req, server.adminToken);
  const search = async (req: JsonObject, p: Protocol = "grpc") => okMessage(await call("SearchTargets", req, p));
  const inMade = () => ({ inIds: { ids: allIds } });
  const createTarget = async (target: JsonObject): Promise<string> => okMessage(await call("CreateTarget", { target })).details.id;

  beforeAll(async () => {
    server = await startTestServer(kind);
    for (const [i, spec] of SPECS.entries()) {
      made.push({ ...spec, id: await createTarget(targetJson(spec)), created: i, changed: i });
      await sleep(3);
    }
    for (const [n, i] of PATCHED.entries()) {
      okMessage(await call("PatchTarget", { id: made[i]!.id, target: { regenerateSigningKey: true } }));
      made[i]!.changed = 100 + n;
      await sleep(3);
    }
    allIds = made.map((t) => t.id);
  });
  afterAll(() => server?.close());

  describe("SearchTargets paging", () => {
    it("returns the newest first by default, ascending with asc", async () => {
      const byCreation = made.map((t) => t.id);
      const desc = await search({ filters: [inMade()] });
      expect(ids(desc)).toEqual([...byCreation].reverse());
      expect(listDetails(desc)).toMatchObject({ appliedLimit: 100, totalResult: 12, endOfList: true });
      expect(ids(await search({ query: { asc: true }, filters: [inMade()] }))).toEqual(byCreation);
    });

    it("searches every target of the instance when no filter is given", async () => {
      const all = await search({ query: { limit: 1000 } });
      expect(listDetails(all).totalResult).toBeGreaterThanOrEqual(12);
      expect(ids(all).filter((id) => allIds.includes(id))).toEqual([...allIds].reverse());
    });

    it("pages with limit and offset, reporting total_result and end_of_list", async () => {
      const expected = [...allIds].reverse();
      const page = (offset: number) => search({ query: { limit: 5, offset: String(offset) }, filters: [inMade()] });
      const first = await page(0);
      expect(ids(first)).toEqual(expected.slice(0, 5));
      expect(listDetails(first)).toMatchObject({ appliedLimit: 5, totalResult: 12, endOfList: false });
      const middle = await page(5);
      expect(ids(middle)).toEqual(expected.slice(5, 10));
      expect(listDetails(middle)).toMatchObject({ appliedLimit: 5, totalResult: 12, endOfList: false });
      const last = await page(10);
      expect(ids(last)).toEqual(expected.slice(10));
      expect(listDetails(last)).toMatchObject({ totalResult: 12, endOfList: true });
      for (const offset of [12, 50]) {
        const past = await page(offset);
        expect(ids(past)).toEqual([]);
        expect(listDetails(past)).toMatchObject({ totalResult: 12, endOfList: true });
      }
      const exact = await search({ query: { limit: 12 }, filters: [inMade()] });
      expect(listDetails(exact)).toMatchObject({ totalResult: 12, endOfList: true });
    });

    it("applies 100 when no limit or limit 0 is given, 1000 at most, and rejects 1001", async () => {
      expect(listDetails(await search({})).appliedLimit).toBe(100);
      expect(listDetails(await search({ query: { limit: 0, offset: "0" } })).appliedLimit).toBe(100);
      expect(listDetails(await search({ query: { limit: 1000 } })).appliedLimit).toBe(1000);
      expect(await call("SearchTargets", { query: { limit: 1001 } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await call("SearchTargets", { query: { limit: 1001 } }, "rest")).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        httpStatus: 400,
      });
      expect(listDetails(await search({}, "rest")).appliedLimit).toBe(100);
    });

    it("reports a processed_sequence that grows with each write, and the projection's timestamp", async () => {
      const before = listDetails(await search({}));
      expect(before.processedSequence).toBeGreaterThan(0n);
      expect(Number.isNaN(Date.parse(before.timestamp ?? ""))).toBe(false);
      await createTarget(targetJson({ ...SPECS[0]!, name: "seqprobe" }));
      const after = listDetails(await search({}));
      expect(after.processedSequence).toBeGreaterThan(before.processedSequence);
      expect(Date.parse(after.timestamp!)).toBeGreaterThanOrEqual(Date.parse(before.timestamp!));
    });
  });

  describe("SearchTargets sorting", () => {
    const isAsync = (t: Made) => t.mode === "async";
    const interrupts = (t: Made) => t.mode === "interrupt";
    const columns: [string, (t: Made) => string | number | boolean][] = [
      ["TARGET_FIELD_NAME_ID", (t) => t.id],
      ["TARGET_FIELD_NAME_CREATION_DATE", (t) => t.created],
      ["TARGET_FIELD_NAME_CHANGE_DATE", (t) => t.changed],
      ["TARGET_FIELD_NAME_NAME", (t) => t.name],
      ["TARGET_FIELD_NAME_URL", (t) => t.url],
      ["TARGET_FIELD_NAME_TIMEOUT", (t) => t.timeoutS],
      ["TARGET_FIELD_NAME_ASYNC", isAsync],
      ["TARGET_FIELD_NAME_INTERRUPT_ON_ERROR", interrupts],
    ];

    it.each(columns)("orders by %s in both directions, ties by id", async (column, key) => {
      const asc = await search({ query: { asc: true }, sortingColumn: column, filters: [inMade()] });
      expect(asc.sortingColumn).toBe(column);
      expect(ids(asc)).toEqual(sortedBy(made, key));
      const desc = await search({ sortingColumn: column, filters: [inMade()] });
      expect(ids(desc)).toEqual(sortedBy(made, key).reverse());
    });

    it("orders by TARGET_FIELD_NAME_TARGET_TYPE: grouped by type, ties by id, desc the reverse of asc", async () => {
      const webhookFirst = sortedBy(made, (t) => (t.kind === "restWebhook" ? 0 : 1));
      const requestResponseFirst = sortedBy(made, (t) => (t.kind === "restWebhook" ? 1 : 0));
      const asc = ids(await search({ query: { asc: true }, sortingColumn: "TARGET_FIELD_NAME_TARGET_TYPE", filters: [inMade()] }));
      expect([webhookFirst, requestResponseFirst]).toContainEqual(asc);
      const desc = ids(await search({ sortingColumn: "TARGET_FIELD_NAME_TARGET_TYPE", filters: [inMade()] }));
      expect(desc).toEqual([...asc].reverse());
    });

    it("pages a sorted search without gaps or repeats", async () => {
      const expected = sortedBy(made, (t) => t.mode === "async");
      const seen: string[] = [];
      for (let offset = 0; offset < 12; offset += 5) {
        seen.push(
          ...ids(await search({ query: { asc: true, limit: 5, offset: String(offset) }, sortingColumn: "TARGET_FIELD_NAME_ASYNC", filters: [inMade()] })),
        );
      }
      expect(seen).toEqual(expected);
    });

    it("takes query.limit, query.offset, query.asc and sortingColumn as REST query parameters", async () => {
      const rest = async (qs: string) => {
        const res = await fetch(`${server.baseUrl}/resources/v3alpha/targets/_search?${qs}`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
          body: JSON.stringify([inMade()]),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as Msg;
      };
      const grpc = await search({ query: { limit: 4, offset: "2", asc: true }, sortingColumn: "TARGET_FIELD_NAME_TIMEOUT", filters: [inMade()] });
      const viaRest = await rest("query.limit=4&query.offset=2&query.asc=true&sortingColumn=TARGET_FIELD_NAME_TIMEOUT");
      expect(ids(viaRest)).toEqual(ids(grpc));
      expect(ids(viaRest)).toEqual(sortedBy(made, (t) => t.timeoutS).slice(2, 6));
      expect(listDetails(viaRest)).toMatchObject({ appliedLimit: 4, totalResult: 12, endOfList: false });
      expect(viaRest.sortingColumn).toBe("TARGET_FIELD_NAME_TIMEOUT");
      const byName = await rest("query.limit=3&sortingColumn=TARGET_FIELD_NAME_NAME");
      expect(ids(byName)).toEqual(
        sortedBy(made, (t) => t.name)
          .reverse()
          .slice(0, 3),
      );
      const snake = await rest("query.asc=1&sorting_column=4");
      expect(ids(snake)).toEqual(sortedBy(made, (t) => t.name));
      expect(snake.sortingColumn).toBe("TARGET_FIELD_NAME_NAME");
      const client = await search({ query: { limit: 3, offset: "9" }, sortingColumn: "TARGET_FIELD_NAME_URL", filters: [inMade()] }, "rest");
      expect(ids(client)).toEqual(
        sortedBy(made, (t) => t.url)
          .reverse()
          .slice(9),
      );
      expect(listDetails(client)).toMatchObject({ totalResult: 12, endOfList: true });
    });
  });

  describe("SearchTargets filters", () => {
    const names = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.target.name).sort();
    const byName = (name: string, method: string) => search({ filters: [{ name: { name, method: `TEXT_FILTER_METHOD_${method}` } }] });

    it.each([
      ["EQUALS", "Fruit-Apple", ["Fruit-Apple"]],
      ["EQUALS", "fruit-apple", []],
      ["EQUALS_IGNORE_CASE", "fruit-APPLE", ["Fruit-Apple"]],
      ["STARTS_WITH", "Fruit-", ["Fruit-Apple", "Fruit-Banana"]],
      ["STARTS_WITH_IGNORE_CASE", "fruit-a", ["Fruit-Apple", "fruit-apricot"]],
      ["CONTAINS", "apple", ["other-apple-FRUIT"]],
      ["CONTAINS_IGNORE_CASE", "APPLE", ["Fruit-Apple", "other-apple-FRUIT"]],
      ["ENDS_WITH", "FRUIT", ["other-apple-FRUIT"]],
      ["ENDS_WITH_IGNORE_CASE", "anANA", ["Fruit-Banana"]],
    ] as const)("name %s %j", async (method, value, expected) => {
      if (!(await byName("Fruit-Apple", "EQUALS")).result) {
        for (const name of ["Fruit-Apple", "fruit-apricot", "Fruit-Banana", "other-apple-FRUIT"]) {
          await createTarget({ name, restWebhook: { url: "https://example.org/fruit" } });
        }
      }
      expect(names(await byName(value, method))).toEqual([...expected].sort());
    });

    it("matches %, _ and \\ in name filters literally", async () => {
      for (const name of ["pct%lit", "pctXlit", "usc_lit", "uscXlit", "bs\\lit", "bsXlit"]) {
        await createTarget({ name, restRequestResponse: { url: "https://example.org/like" } });
      }
      const cases: [string, string, string[]][] = [
        ["EQUALS", "pct%lit", ["pct%lit"]],
        ["EQUALS", "pct_lit", []],
        ["EQUALS_IGNORE_CASE", "USC_LIT", ["usc_lit"]],
        ["CONTAINS", "t%l", ["pct%lit"]],
        ["CONTAINS", "%", ["pct%lit"]],
        ["CONTAINS_IGNORE_CASE", "T%L", ["pct%lit"]],
        ["STARTS_WITH", "usc_", ["usc_lit"]],
        ["STARTS_WITH_IGNORE_CASE", "USC_", ["usc_lit"]],
        ["ENDS_WITH", "_lit", ["usc_lit"]],
        ["ENDS_WITH_IGNORE_CASE", "%LIT", ["pct%lit"]],
        ["CONTAINS", "s\\l", ["bs\\lit"]],
        ["STARTS_WITH", "bs\\", ["bs\\lit"]],
      ];
      for (const [method, value, expected] of cases) {
        expect(names(await byName(value, method)), `${method} ${value}`).toEqual(expected);
      }
    });

    it("rejects a name filter longer than 200 characters", async () => {
      expect(await call("SearchTargets", { filters: [{ name: { name: "x".repeat(201) } }] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    });

    it("filters by in_ids, ignoring unknown ids, and combines filters with AND", async () => {
      const some = [made[0]!, made[4]!, made[7]!];
      const found = await search({ query: { asc: true }, filters: [{ inIds: { ids: [...some.map((t) => t.id), "no-such-id"] } }] });
      expect(ids(found)).toEqual(some.map((t) => t.id));
      expect(listDetails(found).totalResult).toBe(3);

      const other = await createTarget({ name: "notsrt-combined", restWebhook: { url: "https://example.org/c" } });
      const both = await search({
        query: { asc: true },
        filters: [{ name: { name: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, { inIds: { ids: [...some.map((t) => t.id), other] } }],
      });
      expect(ids(both)).toEqual(some.map((t) => t.id));

      const twoNames = await search({
        query: { asc: true },
        filters: [{ name: { name: "srt", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }, { name: { name: "o", method: "TEXT_FILTER_METHOD_ENDS_WITH" } }],
      });
      expect(ids(twoNames)).toEqual(made.filter((t) => t.name.endsWith("o")).map((t) => t.id));
    });
  });

  describe("SearchExecutions", () => {
    const PA = "platform.resources.action.v3alpha.PlatformActions";
    let tA = "";
    let tB = "";
    const executions: { id: string; targets: string[]; includes: string[] }[] = [];
    const searchEx = async (req: JsonObject, p: Protocol = "grpc") => okMessage(await call("SearchExecutions", req, p));

    beforeAll(async () => {
      tA = await createTarget({ name: "ex-target-a", restWebhook: { url: "https://example.invalid/a" } });
      tB = await createTarget({ name: "ex-target-b", restWebhook: { url: "https://example.invalid/b" } });
      const puts: [JsonObject, string, string[], string[]][] = [
        [{ request: { method: `/${PA}/GetTarget` } }, `request/${PA}/GetTarget`, [tA], []],
        [{ request: { service: PA } }, `request/${PA}`, [tB], []],
        [{ response: { all: true } }, "response", [tA, tB], []],
        [{ function: "preaccesstoken" }, "function/preaccesstoken", [tB], []],
        [{ function: "preuserinfo" }, "function/preuserinfo", [], ["function/preaccesstoken"]],
        [{ event: { group: "user" } }, "event/user.*", [tA], []],
        [{ event: { event: "user.human.added" } }, "event/user.human.added", [], ["event/user.*"]],
      ];
      for (const [condition, id, targets, includes] of puts) {
        const put = okMessage(await call("PutExecution", { execution: { condition, targets, includes } }));
        expect(put.details.id).toBe(id);
        executions.push({ id, targets, includes });
        await sleep(3);
      }
    });

    const allEx = () => executions.map((e) => e.id);

    it("returns the newest first by default, ascending with asc, and pages", async () => {
      const desc = await searchEx({});
      expect(ids(desc)).toEqual([...allEx()].reverse());
      expect(listDetails(desc)).toMatchObject({ appliedLimit: 100, totalResult: 7, endOfList: true });
      expect(ids(await searchEx({ query: { asc: true } }))).toEqual(allEx());

      const page = (offset: number) => searchEx({ query: { limit: 3, offset: String(offset), asc: true } });
      const middle = await page(3);
      expect(ids(middle)).toEqual(allEx().slice(3, 6));
      expect(listDetails(middle)).toMatchObject({ appliedLimit: 3, totalResult: 7, endOfList: false });
      const last = await page(6);
      expect(ids(last)).toEqual(allEx().slice(6));
      expect(listDetails(last)).toMatchObject({ totalResult: 7, endOfList: true });
      const past = await page(10);
      expect(ids(past)).toEqual([]);
      expect(listDetails(past)).toMatchObject({ totalResult: 7, endOfList: true });
      expect(listDetails(past).processedSequence).toBeGreaterThan(0n);
      expect(listDetails(past).timestamp).toBeDefined();

      const rest = await searchEx({ query: { limit: 3, offset: "3", asc: true } }, "rest");
      expect(ids(rest)).toEqual(allEx().slice(3, 6));
      expect(await call("SearchExecutions", { query: { limit: 1001 } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await call("SearchExecutions", { query: { limit: 1001 } }, "rest")).toMatchObject({ ok: false, httpStatus: 400 });
    });

    it("returns each execution's condition, targets in order, and includes", async () => {
      const found = await searchEx({ query: { asc: true } });
      expect(found.result.map((r: Msg) => ({ id: r.details.id, targets: r.execution.targets ?? [], includes: r.execution.includes ?? [] }))).toEqual(
        executions,
      );
      expect(found.result[0].execution.condition).toEqual({ request: { method: `/${PA}/GetTarget` } });
      expect(found.result[5].execution.condition).toEqual({ event: { group: "user" } });
    });

    it("filters by in_conditions, execution_type, target and include, combined with AND", async () => {
      const q = (filters: JsonObject[]) => searchEx({ query: { asc: true }, filters }).then(ids);
      expect(await q([{ inConditions: { conditions: [{ event: { group: "user" } }, { request: { method: `/${PA}/GetTarget` } }] } }])).toEqual([
        `request/${PA}/GetTarget`,
        "event/user.*",
      ]);
      expect(await q([{ inConditions: { conditions: [{ request: { all: true } }] } }])).toEqual([]);
      expect(await q([{ executionType: { type: "EXECUTION_TYPE_REQUEST" } }])).toEqual([`request/${PA}/GetTarget`, `request/${PA}`]);
      expect(await q([{ executionType: { type: "EXECUTION_TYPE_RESPONSE" } }])).toEqual(["response"]);
      expect(await q([{ executionType: { type: "EXECUTION_TYPE_FUNCTION" } }])).toEqual(["function/preaccesstoken", "function/preuserinfo"]);
      expect(await q([{ executionType: { type: "EXECUTION_TYPE_EVENT" } }])).toEqual(["event/user.*", "event/user.human.added"]);
      expect(await q([{ target: { id: tA } }])).toEqual([`request/${PA}/GetTarget`, "response", "event/user.*"]);
      expect(await q([{ target: { id: "no-such-target" } }])).toEqual([]);
      expect(await q([{ include: { include: "function/preaccesstoken" } }])).toEqual(["function/preuserinfo"]);
      expect(await q([{ include: { include: "event/user.*" } }])).toEqual(["event/user.human.added"]);
      expect(await q([{ executionType: { type: "EXECUTION_TYPE_FUNCTION" } }, { target: { id: tB } }])).toEqual(["function/preaccesstoken"]);
      expect(await q([{ target: { id: tA } }, { target: { id: tB } }])).toEqual(["response"]);
      const filtered = await searchEx({ query: { limit: 1 }, filters: [{ target: { id: tB } }] });
      expect(ids(filtered)).toEqual(["function/preaccesstoken"]);
      expect(listDetails(filtered)).toMatchObject({ totalResult: 3, endOfList: false, appliedLimit: 1 });
      expect(ids(await searchEx({ query: { asc: true }, filters: [{ target: { id: tA } }] }, "rest"))).toEqual([
        `request/${PA}/GetTarget`,
        "response",
        "event/user.*",
      ]);
    });

    it("rejects an unspecified execution_type and an empty in_conditions", async () => {
      expect(await call("SearchExecutions", { filters: [{ executionType: {} }] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await call("SearchExecutions", { filters: [{ inConditions: {} }] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    });
  });
});
