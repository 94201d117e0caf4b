import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PROTOCOLS, protocolClient, restRequest, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Rules: a missing, malformed, unknown or expired bearer token is Unauthenticated (REST 401),
 * on every protocol and every PlatformActions RPC, and nothing is written on its behalf.
 */

const ROUTES = routesOf([PlatformActions]);

/** Like test/support/clients.ts, but sends the Authorization header verbatim (or none). */
async function callWithHeader(protocol: Protocol, baseUrl: string, name: string, request: JsonObject, authorization?: string): Promise<CallResult> {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  const method = PlatformActions.methods.find((m) => m.name === name)!;
  if (protocol === "rest") {
    const route = ROUTES.find((r) => r.method.name === name)!;
    const { url, body } = restRequest(route, request, baseUrl);
    const res = await fetch(url, {
      method: route.httpMethod,
      headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as JsonObject;
    if (res.ok) return { ok: true, message: json, httpStatus: res.status };
    return { ok: false, code: json.code as Code, message: String(json.message), httpStatus: res.status };
  }
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl })
      : protocol === "grpc-web"
        ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
        : createConnectTransport({ baseUrl, httpVersion: protocol === "connect-h2" ? "2" : "1.1" });
  const client = createClient(PlatformActions, transport) as unknown as Record<string, (req: unknown, opts: unknown) => Promise<unknown>>;
  try {
    const output = await client[method.localName]!(fromJson(method.input, request), { headers });
    return { ok: true, message: toJson(method.output, output as never) as JsonObject };
  } catch (error) {
    const e = ConnectError.from(error);
    return { ok: false, code: e.code, message: e.rawMessage };
  }
}

function expectUnauthenticated(result: CallResult, label: string) {
  expect(result, label).toMatchObject({ ok: false, code: Code.Unauthenticated });
  if (!result.ok) expect(result.message, label).not.toBe("");
  if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(401);
}

describe.each(DATABASE_KINDS)("authentication of PlatformActions (%s)", (kind) => {
  let server: TestServer;
  let targetId: string;
  /** One request per RPC; the ids exist, so only authentication can stop the call. */
  let requests: [string, JsonObject][];

  beforeAll(async () => {
    server = await startTestServer(kind);
    const admin = protocolClient(PlatformActions, "grpc", server.baseUrl);
    const created = await admin.call("CreateTarget", { target: { name: "authn-existing", restWebhook: { url: "https://example.com/a" } } }, server.adminToken);
    expect(created.ok).toBe(true);
    targetId = (created as unknown as { message: { details: { id: string } } }).message.details.id;
    const put = await admin.call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [targetId] } }, server.adminToken);
    expect(put.ok).toBe(true);
    requests = [
      ["CreateTarget", { target: { name: "authn-intruder", restWebhook: { url: "https://example.com/x" } } }],
      ["PatchTarget", { id: targetId, target: { name: "authn-renamed" } }],
      ["DeleteTarget", { id: targetId }],
      ["GetTarget", { id: targetId }],
      ["SearchTargets", {}],
      ["PutExecution", { execution: { condition: { function: "preaccesstoken" }, targets: [targetId] } }],
      ["DeleteExecution", { id: "function/preuserinfo" }],
      ["SearchExecutions", {}],
      ["ListAvailableExecutionFunctions", {}],
      ["ListAvailableExecutionMethods", {}],
      ["ListAvailableExecutionServices", {}],
      ["ListAvailableExecutionEvents", {}],
      ["SearchDeliveries", {}],
      ["RetryDelivery", { id: "no-such-delivery" }],
    ];
  });
  afterAll(() => server?.close());

  /** Nothing any rejected call asked for has happened. */
  async function expectUntouched() {
    const target = await server.service.store.db.selectFrom("targets").selectAll().where("id", "=", targetId).executeTakeFirst();
    expect(target).toMatchObject({ name: "authn-existing", sequence: 1 });
    const intruder = await server.service.store.db.selectFrom("targets").select("id").where("name", "=", "authn-intruder").executeTakeFirst();
    expect(intruder).toBeUndefined();
    const executions = await server.service.store.db.selectFrom("executions").select("id").orderBy("id").execute();
    expect(executions.map((e) => e.id)).toEqual(["function/preuserinfo"]);
  }

  const badHeaders: [string, (s: TestServer) => string | undefined][] = [
    ["no Authorization header", () => undefined],
    ["an empty Authorization header", () => ""],
    ["Basic x", () => "Basic x"],
    ["Basic credentials of the admin", () => `Basic ${Buffer.from("platform-admin:secret").toString("base64")}`],
    ["Bearer without a token", () => "Bearer"],
    ["garbage with spaces", () => "this is certainly not a token"],
    ["Bearer with a token containing spaces", () => "Bearer abcdefghijklmnop qrstuvwxyz 0123456789"],
    ["the admin token without the Bearer scheme", (s) => s.adminToken],
    ["the admin token with the Basic scheme", (s) => `Basic ${s.adminToken}`],
    ["the admin token with trailing garbage", (s) => `Bearer ${s.adminToken} extra`],
    ["an unknown, well-formed token", () => `Bearer ${"Zx9".repeat(15)}`],
  ];

  it.each(badHeaders)("rejects %s as Unauthenticated on every protocol and RPC", async (label, header) => {
    for (const protocol of PROTOCOLS) {
      for (const [method, request] of requests) {
        const result = await callWithHeader(protocol, server.baseUrl, method, request, header(server));
        expectUnauthenticated(result, `${label} / ${protocol} / ${method}`);
      }
    }
    await expectUntouched();
  });

  it("rejects an expired token of an instance owner as Unauthenticated (REST 401)", async () => {
    const expired = await server.createUser({
      roles: [{ context: "instance", roles: ["IAM_OWNER"] }],
      expiresAt: new Date(Date.now() - 1000),
    });
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      for (const [method, request] of requests) {
        expectUnauthenticated(await client.call(method, request, expired.token), `expired / ${protocol} / ${method}`);
      }
    }
    await expectUntouched();
  });

  it("stops accepting a token once it expires, even right after it was used", async () => {
    const expiresAt = new Date(Date.now() + 1500);
    const user = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }], expiresAt });
    for (const protocol of ["grpc", "rest"] as const) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      expect(await client.call("GetTarget", { id: targetId }, user.token), protocol).toMatchObject({ ok: true });
    }
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 100));
    for (const protocol of ["grpc", "rest"] as const) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      expectUnauthenticated(await client.call("GetTarget", { id: targetId }, user.token), `after expiry / ${protocol}`);
    }
  });

  it("accepts valid tokens: the bootstrap admin's and a fresh instance owner's, on every protocol", async () => {
    const owner = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    for (const token of [server.adminToken, owner.token]) {
      for (const protocol of PROTOCOLS) {
        const result = await callWithHeader(protocol, server.baseUrl, "GetTarget", { id: targetId }, `Bearer ${token}`);
        expect(result, protocol).toMatchObject({ ok: true, message: { target: { target: { name: "authn-existing" } } } });
      }
    }
  });

  it("keeps rejecting an unknown token around accepted ones (no cache mix-up)", async () => {
    // A rejected unknown token must not poison the principal cache for a valid one, and vice versa.
    const unknown = `Bearer ${"Qw8".repeat(15)}`;
    expectUnauthenticated(await callWithHeader("grpc", server.baseUrl, "GetTarget", { id: targetId }, unknown), "unknown first");
    expect(await callWithHeader("grpc", server.baseUrl, "GetTarget", { id: targetId }, `Bearer ${server.adminToken}`)).toMatchObject({ ok: true });
    expectUnauthenticated(await callWithHeader("rest", server.baseUrl, "GetTarget", { id: targetId }, unknown), "unknown again");
  });
});
