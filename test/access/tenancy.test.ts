import { request as httpRequest } from "node:http";
import { connect, type LookupFunction } from "node:net";
import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PROTOCOLS, protocolClient, restRequest, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { at, createInstance, INSTANCES } from "../instances/helpers.js";

/**
 * Tenancy: the Host header's host name selects the instance; an unknown host is NotFound
 * naming it; tokens are valid on their own instance's hosts only (system members reach
 * others through ctx); a resource of another instance is NotFound, never PermissionDenied,
 * and never listed.
 */

const ROUTES = routesOf([PlatformActions]);

/** Resolves every host name to the test server's loopback address. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

/** Calls an RPC at http://<host>:<port>, whatever the host name, so that Host is that name. */
async function callAtHost(protocol: Protocol, host: string, port: number, name: string, req: JsonObject, token?: string): Promise<CallResult> {
  const baseUrl = `http://${host}:${port}`;
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (protocol === "rest") {
    const route = ROUTES.find((r) => r.method.name === name)!;
    const { url, body } = restRequest(route, req, baseUrl);
    const { status, json } = await new Promise<{ status: number; json: JsonObject }>((resolve, reject) => {
      const r = httpRequest(url, { method: route.httpMethod, lookup: toLoopback, headers: { ...headers, "content-type": "application/json" } }, (res) => {
        let text = "";
        res
          .setEncoding("utf8")
          .on("data", (c: string) => (text += c))
          .on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) as JsonObject }));
      });
      r.on("error", reject).end(body === undefined ? undefined : JSON.stringify(body));
    });
    if (status < 300) return { ok: true, message: json, httpStatus: status };
    return { ok: false, code: json.code as Code, message: String(json.message), httpStatus: status };
  }
  const nodeOptions = { lookup: toLoopback };
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl, nodeOptions })
      : protocol === "grpc-web"
        ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1", nodeOptions })
        : protocol === "connect"
          ? createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions })
          : createConnectTransport({ baseUrl, httpVersion: "2", nodeOptions });
  const method = PlatformActions.methods.find((m) => m.name === name)!;
  const client = createClient(PlatformActions, transport) as unknown as Record<string, (r: unknown, o: unknown) => Promise<unknown>>;
  try {
    const output = await client[method.localName]!(fromJson(method.input, req), { headers });
    return { ok: true, message: toJson(method.output, output as never) as JsonObject };
  } catch (error) {
    const e = ConnectError.from(error);
    return { ok: false, code: e.code, message: e.rawMessage };
  }
}

/** Sends raw bytes (e.g. an HTTP/1.0 request without Host) and returns the status line's code, or 0 without an answer. */
function rawHttpStatus(port: number, request: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    let text = "";
    socket.setTimeout(5000, () => socket.destroy());
    socket
      .on("data", (chunk) => (text += String(chunk)))
      .on("error", () => {})
      .on("close", () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)));
  });
}

const idOf = (r: CallResult) => (r as unknown as { message: { details: { id: string } } }).message.details.id;
const ownerOf = (r: CallResult) => (r as unknown as { message: { details: { resourceOwner: { id: string } } } }).message.details.resourceOwner.id;
const webhook = (name: string) => ({ target: { name, restWebhook: { url: "https://example.com/t" } } });

/** A successful search that found nothing (proto3 JSON omits a zero total). */
function expectEmpty(result: CallResult, label: string) {
  expect(result, label).toMatchObject({ ok: true });
  const message = (result as unknown as { message: { result?: unknown[]; details?: { totalResult?: string } } }).message;
  expect(message.result ?? [], label).toEqual([]);
  expect(message.details?.totalResult ?? "0", label).toBe("0");
}

function expectCode(result: CallResult, code: Code, status: number, label: string) {
  expect(result, label).toMatchObject({ ok: false, code });
  if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(status);
}

describe.each(DATABASE_KINDS)("tenancy of PlatformActions (%s)", (kind) => {
  let server: TestServer;
  let b: Awaited<ReturnType<TestServer["createInstance"]>>;
  let targetA: string;
  /** A client of instance A (localhost) or B (127.0.0.1) over one protocol. */
  const onA = (p: Protocol) => protocolClient(PlatformActions, p, server.baseUrl);
  const onB = (p: Protocol) => protocolClient(PlatformActions, p, b.baseUrl);

  beforeAll(async () => {
    server = await startTestServer(kind);
    b = await server.createInstance("127.0.0.1");
    const created = await onA("grpc").call("CreateTarget", webhook("tenancy-a"), server.adminToken);
    expect(created.ok).toBe(true);
    targetA = idOf(created);
    const put = await onA("grpc").call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [targetA] } }, server.adminToken);
    expect(put).toMatchObject({ ok: true, message: { created: true } });
  });
  afterAll(() => server?.close());

  /** A's target and execution as they were made: nothing done through B touched them. */
  async function expectAUntouched() {
    const got = await onA("grpc").call("GetTarget", { id: targetA }, server.adminToken);
    expect(got).toMatchObject({ ok: true, message: { target: { details: { sequence: "1" }, target: { name: "tenancy-a" } } } });
    const executions = await onA("grpc").call("SearchExecutions", { filters: [{ target: { id: targetA } }] }, server.adminToken);
    expect(executions).toMatchObject({ ok: true, message: { result: [{ details: { id: "function/preuserinfo", sequence: "1" } }] } });
  }

  it("selects the instance by the Host header: the same name lives once per instance", async () => {
    for (const protocol of PROTOCOLS) {
      const name = `tenancy-shared-${protocol}`;
      const inA = await onA(protocol).call("CreateTarget", webhook(name), server.adminToken);
      const inB = await onB(protocol).call("CreateTarget", webhook(name), b.adminToken);
      expect(inA, protocol).toMatchObject({ ok: true });
      expect(inB, protocol).toMatchObject({ ok: true });
      expect(ownerOf(inA)).toBe(server.instanceId);
      expect(ownerOf(inB)).toBe(b.instanceId);
      expect(idOf(inA)).not.toBe(idOf(inB));
      const again = await onB(protocol).call("CreateTarget", webhook(name), b.adminToken);
      expectCode(again, Code.AlreadyExists, 409, `${protocol} duplicate in B`);
    }
  });

  it("answers an unknown host with NotFound naming the host, with or without a token", async () => {
    const { port } = server.service;
    for (const protocol of PROTOCOLS) {
      for (const token of [server.adminToken, undefined]) {
        const result = await callAtHost(protocol, "nowhere.example", port, "SearchTargets", {}, token);
        expectCode(result, Code.NotFound, 404, `${protocol} token=${Boolean(token)}`);
        expect((result as { message: string }).message, protocol).toContain("nowhere.example");
      }
    }
    // The same helper reaches a known host, so the failure above is the host's alone.
    expect(await callAtHost("rest", "localhost", port, "GetTarget", { id: targetA }, server.adminToken)).toMatchObject({ ok: true });
    expect(await callAtHost("grpc", "LOCALHOST", port, "GetTarget", { id: targetA }, server.adminToken)).toMatchObject({ ok: true });
  });

  it("forgets an unknown host once an instance is created for it: served at once", async () => {
    const { port } = server.service;
    const host = `late-${kind}.example`;
    expectCode(await callAtHost("grpc", host, port, "SearchTargets", {}), Code.NotFound, 404, "before");
    // Through the API: its commit is a change of access, which empties the cached misses.
    const late = await createInstance(at(INSTANCES, "grpc", "localhost", port), server.adminToken, [host]);
    for (const protocol of ["grpc", "rest"] as const) {
      const made = await callAtHost(protocol, host, port, "CreateTarget", webhook(`tenancy-late-${protocol}`), late.adminPat);
      expect(made, protocol).toMatchObject({ ok: true });
      expect(ownerOf(made)).toBe(late.id);
    }
  });

  /** An HTTP/1.0 POST with no Host header (legal in HTTP/1.0), optionally with a token. */
  const hostless = (path: string, body: string, token?: string) =>
    `POST ${path} HTTP/1.0\r\n${token ? `Authorization: Bearer ${token}\r\n` : ""}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

  it("serves no instance to a REST request without a Host header (no host name, no instance)", async () => {
    const status = await rawHttpStatus(server.service.port, hostless("/resources/v3alpha/targets/_search", "[]", server.adminToken));
    expect([400, 404], `REST status ${status}`).toContain(status);
  });

  it("answers a Connect request without a Host header with an error, and keeps running", async () => {
    const status = await rawHttpStatus(server.service.port, hostless("/platform.resources.action.v3alpha.PlatformActions/SearchTargets", "{}"));
    expect(status, "an HTTP answer at all").toBeGreaterThanOrEqual(400);
    expect(status, "a client error, not a crash").toBeLessThan(500);
    expect(await onA("rest").call("GetTarget", { id: targetA }, server.adminToken)).toMatchObject({ ok: true });
  });

  it.each(["a b", "x:99999", "[::1", "exa mple.com:80"])("answers a garbled Host %j with 400 on every path, and keeps running", async (host) => {
    const paths = ["/platform.resources.action.v3alpha.PlatformActions/SearchTargets", "/grpc.health.v1.Health/Check", "/resources/v3alpha/targets/_search"];
    for (const path of paths) {
      const request = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
      expect(await rawHttpStatus(server.service.port, request), `${host} ${path}`).toBe(400);
    }
    expect(await onA("rest").call("GetTarget", { id: targetA }, server.adminToken)).toMatchObject({ ok: true });
  });

  it("rejects a token of another instance as Unauthenticated (REST 401) when its user is no system member", async () => {
    const ownerOfA = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    const viewerOfB = await server.createUser({ instanceId: b.instanceId, roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    for (const protocol of PROTOCOLS) {
      expectCode(await onA(protocol).call("GetTarget", { id: targetA }, b.adminToken), Code.Unauthenticated, 401, `${protocol} B admin on A`);
      expectCode(await onA(protocol).call("SearchTargets", {}, viewerOfB.token), Code.Unauthenticated, 401, `${protocol} B viewer on A`);
      expectCode(
        await onA(protocol).call("CreateTarget", webhook("tenancy-intruder"), b.adminToken),
        Code.Unauthenticated,
        401,
        `${protocol} B admin writes on A`,
      );
      expectCode(await onB(protocol).call("SearchTargets", {}, ownerOfA.token), Code.Unauthenticated, 401, `${protocol} A owner on B`);
      expectCode(await onB(protocol).call("ListAvailableExecutionFunctions", {}, ownerOfA.token), Code.Unauthenticated, 401, `${protocol} A owner lists on B`);
    }
    expectEmpty(await onA("grpc").call("SearchTargets", { filters: [{ name: { name: "tenancy-intruder" } }] }, server.adminToken), "intruder");
  });

  it("lets a system member reach another instance through ctx, never through that instance's Host", async () => {
    const systemOfB = await server.createUser({ instanceId: b.instanceId, roles: [{ context: "system", roles: ["SYSTEM_OWNER"] }] });
    const inB = { ctx: { instanceId: b.instanceId } };
    const inA = { ctx: { instanceId: server.instanceId } };
    for (const protocol of ["grpc", "rest", "connect"] as const) {
      expectCode(await onB(protocol).call("SearchTargets", {}, server.adminToken), Code.Unauthenticated, 401, `${protocol} platform-admin on B's host`);
      const made = await onA(protocol).call("CreateTarget", { ...webhook(`tenancy-by-platform-admin-${protocol}`), ...inB }, server.adminToken);
      expect(made, protocol).toMatchObject({ ok: true });
      expect(ownerOf(made)).toBe(b.instanceId);
      expectCode(await onA(protocol).call("GetTarget", { id: idOf(made) }, server.adminToken), Code.NotFound, 404, `${protocol} B's target on A`);
      expect(await onB(protocol).call("GetTarget", { id: idOf(made) }, b.adminToken), protocol).toMatchObject({ ok: true });

      expectCode(await onA(protocol).call("SearchTargets", {}, systemOfB.token), Code.Unauthenticated, 401, `${protocol} system member of B on A's host`);
      const madeInA = await onB(protocol).call("CreateTarget", { ...webhook(`tenancy-by-system-of-b-${protocol}`), ...inA }, systemOfB.token);
      expect(madeInA, protocol).toMatchObject({ ok: true });
      expect(ownerOf(madeInA)).toBe(server.instanceId);
      expect(await onB(protocol).call("GetTarget", { id: targetA, ...inA }, systemOfB.token), protocol).toMatchObject({ ok: true });
    }
  });

  it("treats A's target as not found on B's host: Get, Patch and Delete are NotFound, never PermissionDenied", async () => {
    const viewerOfB = await server.createUser({ instanceId: b.instanceId, roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    for (const protocol of PROTOCOLS) {
      const callers = [
        ["B admin", onB(protocol), b.adminToken, {}],
        ["platform-admin in B through ctx", onA(protocol), server.adminToken, { ctx: { instanceId: b.instanceId } }],
      ] as const;
      for (const [who, client, token, ctx] of callers) {
        const label = `${protocol} ${who}`;
        expectCode(await client.call("GetTarget", { id: targetA, ...ctx }, token), Code.NotFound, 404, `${label} Get`);
        expectCode(await client.call("PatchTarget", { id: targetA, target: { name: "stolen" }, ...ctx }, token), Code.NotFound, 404, `${label} Patch`);
        expectCode(await client.call("DeleteTarget", { id: targetA, ...ctx }, token), Code.NotFound, 404, `${label} Delete`);
      }
      expectCode(await onB(protocol).call("GetTarget", { id: targetA }, viewerOfB.token), Code.NotFound, 404, `${protocol} B viewer Get`);
    }
    await expectAUntouched();
  });

  it("never returns A's targets from a search on B, whatever the filter", async () => {
    for (const protocol of PROTOCOLS) {
      const filters = [
        undefined,
        [{ inIds: { ids: [targetA] } }],
        [{ name: { name: "tenancy-a" } }],
        [{ name: { name: "tenancy", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
      ];
      for (const f of filters) {
        const found = await onB(protocol).call("SearchTargets", f ? { filters: f } : { query: { limit: 1000 } }, b.adminToken);
        expect(found, `${protocol} ${JSON.stringify(f)}`).toMatchObject({ ok: true });
        const result = (found as unknown as { message: { result?: { details: { id: string; resourceOwner: { id: string } } }[] } }).message.result ?? [];
        expect(result.map((r) => r.details.id)).not.toContain(targetA);
        for (const r of result) expect(r.details.resourceOwner.id).toBe(b.instanceId);
      }
      expectEmpty(await onB(protocol).call("SearchTargets", { filters: [{ inIds: { ids: [targetA] } }] }, b.adminToken), `${protocol} inIds`);
      expectEmpty(await onB(protocol).call("SearchTargets", { filters: [{ name: { name: "tenancy-a" } }] }, b.adminToken), `${protocol} name`);
    }
  });

  it("keeps executions apart: B cannot use, see or delete A's, and owns its own of the same condition", async () => {
    for (const protocol of ["grpc", "rest", "grpc-web"] as const) {
      const put = await onB(protocol).call("PutExecution", { execution: { condition: { function: "preaccesstoken" }, targets: [targetA] } }, b.adminToken);
      expectCode(put, Code.NotFound, 404, `${protocol} PutExecution with A's target`);
      const search = await onB(protocol).call("SearchExecutions", {}, b.adminToken);
      expect(search, protocol).toMatchObject({ ok: true });
      expect(JSON.stringify((search as { message: JsonObject }).message)).not.toContain(targetA);
      expectEmpty(await onB(protocol).call("SearchExecutions", { filters: [{ target: { id: targetA } }] }, b.adminToken), `${protocol} by target`);
      expectCode(
        await onB(protocol).call("DeleteExecution", { id: "function/preuserinfo" }, b.adminToken),
        Code.NotFound,
        404,
        `${protocol} DeleteExecution of A's`,
      );
    }
    await expectAUntouched();

    const own = await onB("grpc").call("CreateTarget", webhook("tenancy-b-exec"), b.adminToken);
    const sameCondition = await onB("grpc").call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [idOf(own)] } }, b.adminToken);
    expect(sameCondition).toMatchObject({ ok: true, message: { created: true, details: { sequence: "1" } } });
    expect(ownerOf(sameCondition)).toBe(b.instanceId);
    expect(await onB("rest").call("DeleteExecution", { id: "function/preuserinfo" }, b.adminToken)).toMatchObject({ ok: true });
    await expectAUntouched();
  });
});
