import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The flags `multitenancy_resources_api` and `actions` gate every PlatformActions RPC, per
 * instance: with either disabled, every call is FailedPrecondition (REST 400) naming the flag;
 * other instances carry on; enabling the flag again restores service.
 */

const FLAGS = ["multitenancy_resources_api", "actions"] as const;

interface Fixture {
  targetId: string;
  tag: string;
}

/** Every RPC with a request that succeeds while the flags are on (run in this order). */
const RPCS: [string, (f: Fixture) => JsonObject][] = [
  ["CreateTarget", (f) => ({ target: { name: `flags-${f.tag}`, restWebhook: { url: "https://example.com/f" } } })],
  ["GetTarget", (f) => ({ id: f.targetId })],
  ["PatchTarget", (f) => ({ id: f.targetId, target: { timeout: "3s" } })],
  ["SearchTargets", () => ({})],
  ["PutExecution", (f) => ({ execution: { condition: { function: "preaccesstoken" }, targets: [f.targetId] } })],
  ["SearchExecutions", () => ({})],
  ["ListAvailableExecutionFunctions", () => ({})],
  ["ListAvailableExecutionMethods", () => ({})],
  ["ListAvailableExecutionServices", () => ({})],
  ["ListAvailableExecutionEvents", () => ({})],
  ["SearchDeliveries", () => ({})],
  ["DeleteExecution", () => ({ id: "function/preaccesstoken" })],
  ["DeleteTarget", (f) => ({ id: f.targetId })],
];

describe.each(DATABASE_KINDS)("feature flags gating PlatformActions (%s)", (kind) => {
  let server: TestServer;
  let b: Awaited<ReturnType<TestServer["createInstance"]>>;
  let counter = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
    b = await server.createInstance("127.0.0.1");
  });
  afterAll(() => server?.close());
  // Whatever a test did, both instances start the next one with every flag on.
  afterEach(async () => {
    for (const instanceId of [server.instanceId, b.instanceId]) for (const flag of FLAGS) await setFlag(instanceId, flag, true);
  });

  // Through the API, so that the change takes effect on the next request as for any caller.
  const setFlag = (instanceId: string, name: string, enabled: boolean) => setInstanceFlag(server, instanceId, name, enabled);

  const instances = () => ({
    A: { baseUrl: server.baseUrl, token: server.adminToken, id: server.instanceId },
    B: { baseUrl: b.baseUrl, token: b.adminToken, id: b.instanceId },
  });

  /** A target of the instance to act on; made through the API, so while the flags are on. */
  async function seedTarget(on: "A" | "B"): Promise<string> {
    const inst = instances()[on];
    const made = await protocolClient(PlatformActions, "grpc", inst.baseUrl).call(
      "CreateTarget",
      { target: { name: `flags-seed-${++counter}`, restWebhook: { url: "https://example.com/s" } } },
      inst.token,
    );
    expect(made.ok).toBe(true);
    return (made as unknown as { message: { details: { id: string } } }).message.details.id;
  }

  /** Runs every RPC on one instance over one protocol against the given target; results by method. */
  async function everyRpc(on: "A" | "B", protocol: Protocol, targetId: string): Promise<Map<string, CallResult>> {
    const inst = instances()[on];
    const client = protocolClient(PlatformActions, protocol, inst.baseUrl);
    const fixture = { targetId, tag: `${on}-${protocol}-${++counter}` };
    const results = new Map<string, CallResult>();
    for (const [method, request] of RPCS) results.set(method, await client.call(method, request(fixture), inst.token));
    return results;
  }

  /** Every RPC, each protocol on a fresh target (seeded beforehand, while the flags are on). */
  async function seeded(on: "A" | "B", protocols: readonly Protocol[]) {
    const ids = new Map<Protocol, string>();
    for (const protocol of protocols) ids.set(protocol, await seedTarget(on));
    return (protocol: Protocol) => everyRpc(on, protocol, ids.get(protocol)!);
  }

  function expectAllOk(results: Map<string, CallResult>, label: string) {
    for (const [method, result] of results) expect(result, `${label} ${method}`).toMatchObject({ ok: true });
  }

  function expectAllGated(results: Map<string, CallResult>, flag: string, label: string) {
    for (const [method, result] of results) {
      expect(result, `${label} ${method}`).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((result as { message: string }).message, `${label} ${method}`).toContain(flag);
      if (result.httpStatus !== undefined) expect(result.httpStatus, `${label} ${method}`).toBe(400);
    }
  }

  it("serves every RPC on both instances while the flags are on (the defaults)", async () => {
    const [onA, onB] = [await seeded("A", ["grpc", "rest"]), await seeded("B", ["grpc", "rest"])];
    for (const protocol of ["grpc", "rest"] as const) {
      expectAllOk(await onA(protocol), `A ${protocol}`);
      expectAllOk(await onB(protocol), `B ${protocol}`);
    }
  });

  it.each(FLAGS)("gates every RPC of the instance with %s disabled, on every protocol, and leaves the other instance alone", async (flag) => {
    const [onA, onB] = [await seeded("A", PROTOCOLS), await seeded("B", ["grpc", "rest"])];
    await setFlag(server.instanceId, flag, false);
    for (const protocol of PROTOCOLS) expectAllGated(await onA(protocol), flag, `A ${protocol}`);
    for (const protocol of ["grpc", "rest"] as const) expectAllOk(await onB(protocol), `B ${protocol}`);
  });

  it.each(FLAGS)("restores service when %s is enabled again", async (flag) => {
    const onB = await seeded("B", ["grpc", "rest"]);
    await setFlag(b.instanceId, flag, false);
    for (const protocol of ["grpc", "rest"] as const) expectAllGated(await onB(protocol), flag, `B ${protocol} off`);
    await setFlag(b.instanceId, flag, true);
    for (const protocol of ["grpc", "rest"] as const) expectAllOk(await onB(protocol), `B ${protocol} on again`);
  });

  it("writes nothing for a gated call", async () => {
    const targetId = await seedTarget("A");
    const db = server.service.store.db;
    const count = async () =>
      Number(
        (
          await db
            .selectFrom("events")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await setFlag(server.instanceId, "actions", false);
    const before = await count();
    const client = protocolClient(PlatformActions, "grpc", server.baseUrl);
    expect(await client.call("PatchTarget", { id: targetId, target: { name: "flags-gated-rename" } }, server.adminToken)).toMatchObject({
      code: Code.FailedPrecondition,
    });
    expect(await client.call("DeleteTarget", { id: targetId }, server.adminToken)).toMatchObject({ code: Code.FailedPrecondition });
    expect(
      await client.call("CreateTarget", { target: { name: "flags-gated-new", restWebhook: { url: "https://example.com/g" } } }, server.adminToken),
    ).toMatchObject({ code: Code.FailedPrecondition });
    expect(await count()).toBe(before);
    const row = await db.selectFrom("targets").select(["name", "sequence"]).where("id", "=", targetId).executeTakeFirstOrThrow();
    expect(row.sequence).toBe(1);
    expect(row.name).not.toBe("flags-gated-rename");
  });

  it("names the first disabled flag it meets, and stays gated until both are on", async () => {
    await setFlag(server.instanceId, "multitenancy_resources_api", false);
    await setFlag(server.instanceId, "actions", false);
    const client = protocolClient(PlatformActions, "rest", server.baseUrl);
    const both = await client.call("SearchTargets", {}, server.adminToken);
    expect(both).toMatchObject({ ok: false, code: Code.FailedPrecondition, httpStatus: 400 });
    expect((both as { message: string }).message).toMatch(/multitenancy_resources_api|actions/);
    await setFlag(server.instanceId, "multitenancy_resources_api", true);
    const one = await client.call("SearchTargets", {}, server.adminToken);
    expect(one).toMatchObject({ ok: false, code: Code.FailedPrecondition, httpStatus: 400 });
    expect((one as { message: string }).message).toContain("actions");
    await setFlag(server.instanceId, "actions", true);
    expect(await client.call("SearchTargets", {}, server.adminToken)).toMatchObject({ ok: true });
  });
});
