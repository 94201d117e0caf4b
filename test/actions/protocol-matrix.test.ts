import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** What must agree across protocols: everything but generated ids, times, keys and sequences (executions share one id across runs). */
function comparable(result: CallResult, targetId: string): unknown {
  if (!result.ok) return { code: result.code };
  return JSON.parse(
    JSON.stringify(result.message, (key, value) =>
      value === targetId ? "<target>" : ["id", "changeDate", "timestamp", "signingKey", "processedSequence", "sequence"].includes(key) ? "*" : value,
    ),
  );
}

describe.each(DATABASE_KINDS)("every PlatformActions RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** Runs the same scenario once per protocol, each on its own target name. */
  async function scenario(protocol: (typeof PROTOCOLS)[number]) {
    const client = protocolClient(PlatformActions, protocol, server.baseUrl);
    const call = (method: string, req: JsonObject) => client.call(method, req, server.adminToken);
    const name = `hook-${protocol}`;
    const created = await call("CreateTarget", {
      target: { name, restWebhook: { url: "https://example.com/hook" }, timeout: "10s" },
    });
    expect(created.ok).toBe(true);
    const id = (created as unknown as { message: { details: { id: string } } }).message.details.id;
    const results: Record<string, CallResult> = {
      created,
      get: await call("GetTarget", { id }),
      patched: await call("PatchTarget", { id, target: { timeout: "5s", interruptOnError: true } }),
      afterPatch: await call("GetTarget", { id }),
      search: await call("SearchTargets", { filters: [{ name: { name, method: "TEXT_FILTER_METHOD_EQUALS" } }] }),
      put: await call("PutExecution", {
        execution: { condition: { function: "preuserinfo" }, targets: [id] },
      }),
      putAgain: await call("PutExecution", {
        execution: { condition: { function: "preuserinfo" }, targets: [id] },
      }),
      searchExecutions: await call("SearchExecutions", { filters: [{ target: { id } }] }),
      functions: await call("ListAvailableExecutionFunctions", {}),
      methods: await call("ListAvailableExecutionMethods", {}),
      services: await call("ListAvailableExecutionServices", {}),
      deleteExecution: await call("DeleteExecution", { id: "function/preuserinfo" }),
      deleted: await call("DeleteTarget", { id }),
      getDeleted: await call("GetTarget", { id }),
      deleteAgain: await call("DeleteTarget", { id }),
      invalid: await call("CreateTarget", { target: { name, restWebhook: { url: "" } } }),
      unauthenticated: await client.call("GetTarget", { id }),
    };
    return { results, id };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<string, { results: Record<string, CallResult>; id: string }>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { results: grpc, id: grpcId } = byProtocol.get("grpc")!;
    expect(grpc.created!.ok).toBe(true);
    expect((grpc.get as { message: JsonObject }).message).toMatchObject({
      target: { target: { name: "hook-grpc", restWebhook: { url: "https://example.com/hook" }, timeout: "10s" } },
    });
    expect((grpc.afterPatch as { message: JsonObject }).message).toMatchObject({
      target: { details: { sequence: "2" }, target: { timeout: "5s", interruptOnError: true } },
    });
    expect((grpc.put as { message: JsonObject }).message).toMatchObject({ created: true });
    expect((grpc.putAgain as { message: JsonObject }).message).not.toHaveProperty("created");
    expect(grpc.getDeleted).toMatchObject({ ok: false, code: Code.NotFound });
    expect(grpc.deleteAgain).toMatchObject({ ok: false, code: Code.NotFound });
    expect(grpc.invalid).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(grpc.unauthenticated).toMatchObject({ ok: false, code: Code.Unauthenticated });

    const reference = Object.fromEntries(Object.entries(grpc).map(([k, v]) => [k, comparable(v, grpcId)])) as Record<string, unknown>;
    for (const [protocol, { results, id }] of byProtocol) {
      for (const [step, result] of Object.entries(results)) {
        const expected = JSON.stringify(reference[step]).replaceAll("hook-grpc", `hook-${protocol}`);
        expect(comparable(result, id), `${protocol} ${step}`).toEqual(JSON.parse(expected));
      }
    }
  });

  it("answers REST with the spec's statuses: 201 for creates, 201 then 200 for PutExecution, rpcStatus errors", async () => {
    const rest = byRest();
    const created = await rest.call("CreateTarget", { target: { name: "rest-status", restWebhook: { url: "https://example.com" } } });
    expect(created).toMatchObject({ ok: true, httpStatus: 201 });
    const id = (created as unknown as { message: { details: { id: string } } }).message.details.id;
    const put = (req: JsonObject) => rest.call("PutExecution", req);
    const execution = { execution: { condition: { event: { all: true } }, targets: [id] } };
    expect(await put(execution)).toMatchObject({ ok: true, httpStatus: 201 });
    expect(await put(execution)).toMatchObject({ ok: true, httpStatus: 200 });
    expect(await rest.call("GetTarget", { id: "nope" })).toMatchObject({ ok: false, httpStatus: 404, code: Code.NotFound });
  });

  function byRest() {
    const client = protocolClient(PlatformActions, "rest", server.baseUrl);
    return { call: (m: string, r: JsonObject) => client.call(m, r, server.adminToken) };
  }
});
