import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";

const PA = "platform.resources.action.v3alpha.PlatformActions";
const EXECUTIONS_PATH = "/resources/v3alpha/executions";

describe.each(DATABASE_KINDS)("PutExecution, DeleteExecution and the execution catalog (%s)", (kind) => {
  let server: TestServer;
  let t1 = "";
  let t2 = "";
  let t3 = "";
  const call = (method: string, req: JsonObject, p: Protocol = "grpc") =>
    protocolClient(PlatformActions, p, server.baseUrl).call(method, req, server.adminToken);
  const put = (condition: JsonObject, targets: string[], includes: string[] = [], p: Protocol = "grpc") =>
    call("PutExecution", { execution: { condition, targets, includes } }, p);
  const event = (name: string) => ({ event: { event: name } });
  const createTarget = async (name: string) =>
    okMessage(await call("CreateTarget", { target: { name, restWebhook: { url: `https://example.invalid/${name}` } } })).details.id as string;

  /** The stored execution of a condition, read through SearchExecutions; undefined when there is none. */
  async function read(condition: JsonObject): Promise<{ id: string; sequence: bigint; targets: string[]; includes: string[]; condition: Msg } | undefined> {
    const found = okMessage(await call("SearchExecutions", { filters: [{ inConditions: { conditions: [condition] } }] }));
    const results = found.result ?? [];
    expect(results.length).toBeLessThanOrEqual(1);
    const r = results[0];
    if (!r) return undefined;
    return {
      id: r.details.id,
      sequence: BigInt(r.details.sequence),
      targets: r.execution.targets ?? [],
      includes: r.execution.includes ?? [],
      condition: r.execution.condition,
    };
  }

  async function rawDelete(path: string) {
    const res = await fetch(`${server.baseUrl}${EXECUTIONS_PATH}/${path}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    return { status: res.status, body: (await res.json()) as Msg };
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    t1 = await createTarget("exec-t1");
    t2 = await createTarget("exec-t2");
    t3 = await createTarget("exec-t3");
  });
  afterAll(() => server?.close());

  describe("condition types and ids", () => {
    const cases: [string, JsonObject, string][] = [
      ["request method", { request: { method: `/${PA}/GetTarget` } }, `request/${PA}/GetTarget`],
      ["request service", { request: { service: PA } }, `request/${PA}`],
      ["request all", { request: { all: true } }, "request"],
      ["response method", { response: { method: "/grpc.health.v1.Health/Check" } }, "response/grpc.health.v1.Health/Check"],
      ["response service", { response: { service: "grpc.health.v1.Health" } }, "response/grpc.health.v1.Health"],
      ["response all", { response: { all: true } }, "response"],
      ["function", { function: "preaccesstoken" }, "function/preaccesstoken"],
      ["event name", event("user.human.added"), "event/user.human.added"],
      ["event group", { event: { group: "user.human" } }, "event/user.human.*"],
      ["event all", { event: { all: true } }, "event"],
    ];

    it.each(cases)("%s is stored under its id", async (_label, condition, id) => {
      const created = okMessage(await put(condition, [t1]));
      expect(created).toMatchObject({ created: true, details: { id } });
      expect(await read(condition)).toMatchObject({ id, targets: [t1], includes: [], condition });
    });

    it("deletes each of them by id over gRPC", async () => {
      for (const [, condition, id] of cases) {
        okMessage(await put(condition, [t2]));
        expect(okMessage(await call("DeleteExecution", { id })).details.id).toBe(id);
        expect(await read(condition)).toBeUndefined();
      }
    });
  });

  it("answers a first REST put with 201 and created, a second with 200 and replaced targets", async () => {
    const condition = { response: { method: `/${PA}/SearchTargets` } };
    const first = await put(condition, [t1], [], "rest");
    expect(first).toMatchObject({ ok: true, httpStatus: 201, message: { created: true } });
    const second = await put(condition, [t2, t3], [], "rest");
    expect(second).toMatchObject({ ok: true, httpStatus: 200 });
    expect((second as { message: Msg }).message.created ?? false).toBe(false);
    const firstDetails = (first as { message: Msg }).message.details;
    const secondDetails = (second as { message: Msg }).message.details;
    expect(secondDetails.id).toBe(firstDetails.id);
    expect(BigInt(secondDetails.sequence)).toBeGreaterThan(BigInt(firstDetails.sequence));
    expect(await read(condition)).toMatchObject({ targets: [t2, t3], sequence: BigInt(secondDetails.sequence) });
    expect(okMessage(await put(condition, [t3])).created ?? false).toBe(false);
    expect(await read(condition)).toMatchObject({ targets: [t3] });
  });

  it("appends nothing for a put that changes nothing", async () => {
    const condition = event("exec.unchanged");
    const first = okMessage(await put(condition, [t1, t2]));
    const again = okMessage(await put(condition, [t1, t2], [], "rest"));
    expect(again.details.sequence).toBe(first.details.sequence);
    expect(again.created ?? false).toBe(false);
    const reordered = okMessage(await put(condition, [t2, t1]));
    expect(BigInt(reordered.details.sequence)).toBe(BigInt(first.details.sequence) + 1n);
  });

  it("rejects a condition whose execution id would exceed the 200 characters DeleteExecution accepts", async () => {
    const name = "e".repeat(194); // "event/" + 194 = 200 characters
    expect(await put(event(name), [t1])).toMatchObject({ ok: true });
    expect(await put(event(`${name}x`), [t1])).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await read(event(`${name}x`))).toBeUndefined();
    expect(await call("DeleteExecution", { id: `event/${name}` })).toMatchObject({ ok: true });
  });

  describe("rejected puts store nothing", () => {
    it.each([
      ["an unknown method", { request: { method: `/${PA}/Nope` } }],
      ["an unknown service", { response: { service: "foo.v1.Bar" } }],
      ["an unknown function", { function: "nope" }],
    ])("%s is NotFound", async (_label, condition) => {
      expect(await put(condition, [t1])).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await put(condition, [t1], [], "rest")).toMatchObject({ ok: false, code: Code.NotFound, httpStatus: 404 });
      expect(await read(condition)).toBeUndefined();
    });

    it("a missing target is NotFound, on create and on update", async () => {
      expect(await put(event("missing.target"), [t1, "no-such-target"])).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await read(event("missing.target"))).toBeUndefined();
      okMessage(await put(event("keep.targets"), [t1]));
      expect(await put(event("keep.targets"), [t2, "no-such-target"])).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await read(event("keep.targets"))).toMatchObject({ targets: [t1], includes: [] });
    });

    it("an include that does not exist is NotFound", async () => {
      expect(await put(event("missing.include"), [t1], ["event/never.created"])).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await read(event("missing.include"))).toBeUndefined();
    });

    it("an include of another condition type is rejected", async () => {
      const svc = "grpc.reflection.v1.ServerReflection";
      okMessage(await put({ request: { service: svc } }, [t1]));
      for (const [condition, include] of [
        [event("cross.type"), `request/${svc}`],
        [{ response: { service: svc } }, `request/${svc}`],
        [{ function: "preuserinfo" }, `request/${svc}`],
      ] as const) {
        const result = await put(condition, [t1], [include]);
        expect(result.ok).toBe(false);
        expect([Code.NotFound, Code.FailedPrecondition]).toContain((result as { code: Code }).code);
        expect(await read(condition)).toBeUndefined();
      }
    });
  });

  describe("include graph", () => {
    it("rejects an execution including itself", async () => {
      okMessage(await put(event("self.a"), [t1]));
      expect(await put(event("self.a"), [t1], ["event/self.a"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("self.a"))).toMatchObject({ targets: [t1], includes: [] });
      // A new execution including itself is a cycle too, not a missing include.
      const fresh = await put(event("self.new"), [t1], ["event/self.new"]);
      expect(fresh).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("self.new"))).toBeUndefined();
    });

    it("rejects A→B→A and longer cycles with FailedPrecondition", async () => {
      okMessage(await put(event("cyc.b"), [t1]));
      okMessage(await put(event("cyc.a"), [], ["event/cyc.b"]));
      expect(await put(event("cyc.b"), [t1], ["event/cyc.a"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await put(event("cyc.b"), [t1], ["event/cyc.a"], "rest")).toMatchObject({ ok: false, httpStatus: 400, code: Code.FailedPrecondition });
      expect(await read(event("cyc.b"))).toMatchObject({ targets: [t1], includes: [] });
      okMessage(await put(event("cyc.c"), [], ["event/cyc.a"]));
      expect(await put(event("cyc.b"), [t1], ["event/cyc.c"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("cyc.b"))).toMatchObject({ includes: [] });
    });

    it("allows includes three levels deep (A→B→C→D) and rejects a fourth level", async () => {
      okMessage(await put(event("nest.d"), [t1]));
      okMessage(await put(event("nest.c"), [], ["event/nest.d"]));
      okMessage(await put(event("nest.b"), [], ["event/nest.c"]));
      okMessage(await put(event("nest.a"), [t2], ["event/nest.b"]));
      expect(await read(event("nest.a"))).toMatchObject({ targets: [t2], includes: ["event/nest.b"] });
      // On top: E→A→B→C→D.
      expect(await put(event("nest.e"), [t1], ["event/nest.a"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("nest.e"))).toBeUndefined();
      // At the bottom: A→B→C→D→X.
      okMessage(await put(event("nest.x"), [t1]));
      expect(await put(event("nest.d"), [t1], ["event/nest.x"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("nest.d"))).toMatchObject({ targets: [t1], includes: [] });
      // Joining two chains in the middle: J1→J2 plus J3→J4→J5 would become J1→J2→J3→J4→J5.
      okMessage(await put(event("join.5"), [t1]));
      okMessage(await put(event("join.4"), [], ["event/join.5"]));
      okMessage(await put(event("join.3"), [], ["event/join.4"]));
      okMessage(await put(event("join.2"), [t1]));
      okMessage(await put(event("join.1"), [], ["event/join.2"]));
      expect(await put(event("join.2"), [t1], ["event/join.3"])).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await read(event("join.2"))).toMatchObject({ includes: [] });
      // A sibling at level three is fine: A→B→C→X.
      okMessage(await put(event("nest.c"), [], ["event/nest.d", "event/nest.x"]));
      expect(await read(event("nest.c"))).toMatchObject({ includes: ["event/nest.d", "event/nest.x"] });
    });
  });

  describe("DeleteExecution", () => {
    const method = { request: { method: `/${PA}/GetTarget` } };
    const id = `request/${PA}/GetTarget`;

    it("deletes over REST by URL-encoded id and by multi-segment path, and re-creates with 201", async () => {
      expect(await put(method, [t1], [], "rest")).toMatchObject({ httpStatus: 201 });
      const encoded = await rawDelete(encodeURIComponent(id));
      expect(encoded).toMatchObject({ status: 200, body: { details: { id } } });
      expect(await read(method)).toBeUndefined();

      const again = await put(method, [t2], [], "rest");
      expect(again).toMatchObject({ ok: true, httpStatus: 201, message: { created: true } });
      expect(BigInt((again as { message: Msg }).message.details.sequence)).toBeGreaterThan(BigInt(encoded.body.details.sequence));
      expect(await read(method)).toMatchObject({ targets: [t2] });
      expect(await rawDelete(id)).toMatchObject({ status: 200, body: { details: { id } } });
      expect(await read(method)).toBeUndefined();
      expect(await rawDelete(id)).toMatchObject({ status: 404, body: { code: Code.NotFound } });
    });

    it("deletes ids of every shape by path: all, service, group", async () => {
      const shapes: [JsonObject, string][] = [
        [{ response: { all: true } }, "response"],
        [{ request: { service: "grpc.health.v1.Health" } }, "request/grpc.health.v1.Health"],
        [{ event: { group: "grp.del" } }, "event/grp.del.*"],
        [{ function: "preuserinfo" }, "function/preuserinfo"],
      ];
      for (const [condition, path] of shapes) {
        okMessage(await put(condition, [t1]));
        expect(await rawDelete(path), path).toMatchObject({ status: 200, body: { details: { id: path } } });
        expect(await read(condition)).toBeUndefined();
      }
    });

    it("deletes over gRPC, and an unknown id is NotFound on both", async () => {
      const watch = { response: { method: "/grpc.health.v1.Health/Watch" } };
      okMessage(await put(watch, [t1]));
      expect(okMessage(await call("DeleteExecution", { id: "response/grpc.health.v1.Health/Watch" })).details.id).toBe("response/grpc.health.v1.Health/Watch");
      expect(await read(watch)).toBeUndefined();
      expect(await call("DeleteExecution", { id: "response/grpc.health.v1.Health/Watch" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await call("DeleteExecution", { id: "event/never.there" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await call("DeleteExecution", { id: "event/never.there" }, "rest")).toMatchObject({ ok: false, code: Code.NotFound, httpStatus: 404 });
    });

    it("removes the deleted execution from the includes of others", async () => {
      okMessage(await put(event("incl.child"), [t1]));
      const parent = okMessage(await put(event("incl.parent"), [t2], ["event/incl.child"]));
      const byInclude = () => call("SearchExecutions", { filters: [{ include: { include: "event/incl.child" } }] }).then(okMessage);
      expect((await byInclude()).result.map((r: Msg) => r.details.id)).toEqual(["event/incl.parent"]);
      okMessage(await call("DeleteExecution", { id: "event/incl.child" }));
      expect((await byInclude()).result ?? []).toEqual([]);
      const after = await read(event("incl.parent"));
      expect(after).toMatchObject({ targets: [t2], includes: [] });
      expect(after!.sequence).toBeGreaterThan(BigInt(parent.details.sequence));
    });
  });

  it("DeleteTarget removes the target from every execution, which keeps its other targets", async () => {
    const c1 = await createTarget("cascade-1");
    const c2 = await createTarget("cascade-2");
    const both = okMessage(await put(event("cascade.both"), [c1, c2]));
    okMessage(await put(event("cascade.included"), [t3]));
    okMessage(await put(event("cascade.one"), [c1], ["event/cascade.included"]));
    const byTarget = async (id: string) =>
      ((okMessage(await call("SearchExecutions", { query: { asc: true }, filters: [{ target: { id } }] })).result ?? []) as Msg[]).map((r) => r.details.id);
    expect(await byTarget(c1)).toEqual(["event/cascade.both", "event/cascade.one"]);

    okMessage(await call("DeleteTarget", { id: c1 }));
    expect(await call("GetTarget", { id: c1 })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await byTarget(c1)).toEqual([]);
    expect(await byTarget(c2)).toEqual(["event/cascade.both"]);
    const after = await read(event("cascade.both"));
    expect(after).toMatchObject({ targets: [c2], includes: [] });
    expect(after!.sequence).toBeGreaterThan(BigInt(both.details.sequence));
    expect(await read(event("cascade.one"))).toMatchObject({ targets: [], includes: ["event/cascade.included"] });
    // The execution can be updated again afterwards.
    okMessage(await put(event("cascade.both"), [c2, t1]));
    expect(await read(event("cascade.both"))).toMatchObject({ targets: [c2, t1] });
  });

  describe("ListAvailableExecution*", () => {
    const sorted = (list: string[]) => [...list].sort();

    it("lists the functions", async () => {
      const { functions } = okMessage(await call("ListAvailableExecutionFunctions", {}));
      expect(functions).toEqual(["preaccesstoken", "preuserinfo"]);
      expect(okMessage(await call("ListAvailableExecutionFunctions", {}, "rest")).functions).toEqual(functions);
    });

    it("lists the served services, sorted", async () => {
      const { services } = okMessage(await call("ListAvailableExecutionServices", {}));
      expect(services).toEqual(sorted(services));
      expect(new Set(services).size).toBe(services.length);
      expect(services).toEqual(expect.arrayContaining([PA, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]));
      expect(okMessage(await call("ListAvailableExecutionServices", {}, "rest")).services).toEqual(services);
    });

    it("lists the served methods, sorted, each of a listed service and usable in a condition", async () => {
      const { methods } = okMessage(await call("ListAvailableExecutionMethods", {}));
      const { services } = okMessage(await call("ListAvailableExecutionServices", {}));
      expect(methods).toEqual(sorted(methods));
      expect(new Set(methods).size).toBe(methods.length);
      const ours = PlatformActions.methods.map((m) => `/${PA}/${m.name}`);
      expect(ours).toHaveLength(14);
      expect(methods).toEqual(
        expect.arrayContaining([
          ...ours,
          "/grpc.health.v1.Health/Check",
          "/grpc.health.v1.Health/Watch",
          "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        ]),
      );
      for (const m of methods as string[]) expect(services).toContain(m.split("/")[1]);
      expect(okMessage(await call("ListAvailableExecutionMethods", {}, "rest")).methods).toEqual(methods);

      const last = methods[methods.length - 1] as string;
      okMessage(await put({ response: { method: last } }, [t1]));
      okMessage(await call("DeleteExecution", { id: `response${last}` }));
    });
  });
});
