import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Roles -> permissions for PlatformActions (spec section 4, permission column):
 * IAM_OWNER (and SYSTEM_OWNER) hold every action permission; IAM_OWNER_VIEWER only
 * action.target.read and execution.read; ORG_OWNER, ORG_OWNER_VIEWER and users without
 * memberships hold none. A missing permission is PermissionDenied (REST 403).
 */

interface Fixture {
  targetId: string;
  executionId: string;
  protocol: Protocol;
}

type Access = "read" | "write";

/** Every RPC of the service, with the permission class it needs and a request that would succeed. */
const RPCS: [string, Access, (f: Fixture) => JsonObject][] = [
  ["CreateTarget", "write", (f) => ({ target: { name: `authz-new-${f.protocol}`, restWebhook: { url: "https://example.com/new" } } })],
  ["PatchTarget", "write", (f) => ({ id: f.targetId, target: { timeout: "7s" } })],
  ["GetTarget", "read", (f) => ({ id: f.targetId })],
  ["SearchTargets", "read", () => ({ filters: [{ name: { name: "authz-", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] })],
  ["PutExecution", "write", (f) => ({ execution: { condition: { function: "preaccesstoken" }, targets: [f.targetId] } })],
  ["SearchExecutions", "read", () => ({})],
  ["ListAvailableExecutionFunctions", "read", () => ({})],
  ["ListAvailableExecutionMethods", "read", () => ({})],
  ["ListAvailableExecutionServices", "read", () => ({})],
  ["ListAvailableExecutionEvents", "read", () => ({})],
  ["SearchDeliveries", "read", () => ({})],
  ["DeleteExecution", "write", (f) => ({ id: f.executionId })],
  ["DeleteTarget", "write", (f) => ({ id: f.targetId })],
];

function expectDenied(result: CallResult, label: string) {
  expect(result, label).toMatchObject({ ok: false, code: Code.PermissionDenied });
  if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(403);
}

describe.each(DATABASE_KINDS)("authorization of PlatformActions by role (%s)", (kind) => {
  let server: TestServer;
  let fixture: Omit<Fixture, "protocol">;

  beforeAll(async () => {
    server = await startTestServer(kind);
    const admin = protocolClient(PlatformActions, "grpc", server.baseUrl);
    const created = await admin.call(
      "CreateTarget",
      { target: { name: "authz-fixture", restWebhook: { url: "https://example.com/f" }, timeout: "10s" } },
      server.adminToken,
    );
    expect(created.ok).toBe(true);
    const targetId = (created as unknown as { message: { details: { id: string } } }).message.details.id;
    const put = await admin.call("PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [targetId] } }, server.adminToken);
    expect(put.ok).toBe(true);
    fixture = { targetId, executionId: "function/preuserinfo" };
  });
  afterAll(() => server?.close());

  /** The fixture and nothing else: denied calls changed nothing. */
  async function expectFixtureUntouched() {
    const db = server.service.store.db;
    const targets = await db.selectFrom("targets").select(["id", "name", "timeout_ms", "sequence"]).execute();
    expect(targets).toEqual([{ id: fixture.targetId, name: "authz-fixture", timeout_ms: 10_000, sequence: 1 }]);
    const executions = await db.selectFrom("executions").select(["id", "targets", "sequence"]).execute();
    expect(executions).toEqual([{ id: fixture.executionId, targets: [fixture.targetId], sequence: 1 }]);
  }

  const ownerRoles: [string, { context: "system" | "instance" | "org"; roles: string[] }[]][] = [
    ["IAM_OWNER", [{ context: "instance", roles: ["IAM_OWNER"] }]],
    ["SYSTEM_OWNER", [{ context: "system", roles: ["SYSTEM_OWNER"] }]],
  ];

  it.each(ownerRoles)("lets %s call every RPC over every protocol", async (_label, roles) => {
    const user = await server.createUser({ roles });
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      const call = (method: string, req: JsonObject) => client.call(method, req, user.token);
      // Own resources per protocol, so that the writes really succeed and are cleaned up.
      const created = await call("CreateTarget", { target: { name: `authz-own-${protocol}`, restWebhook: { url: "https://example.com/o" } } });
      expect(created, `${protocol} CreateTarget`).toMatchObject({ ok: true });
      const own: Fixture = {
        targetId: (created as unknown as { message: { details: { id: string } } }).message.details.id,
        executionId: "function/preaccesstoken",
        protocol,
      };
      for (const [method, , request] of RPCS) {
        if (method === "CreateTarget") continue;
        const result = await call(method, request(own));
        expect(result, `${protocol} ${method}`).toMatchObject({ ok: true });
      }
    }
    await expectFixtureUntouched();
  });

  it("lets IAM_OWNER_VIEWER read targets and executions and list what is available", async () => {
    const viewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      for (const [method, access, request] of RPCS.filter(([, a]) => a === "read")) {
        const result = await client.call(method, request({ ...fixture, protocol }), viewer.token);
        expect(result, `${protocol} ${method} (${access})`).toMatchObject({ ok: true });
      }
      const got = await client.call("GetTarget", { id: fixture.targetId }, viewer.token);
      expect(got).toMatchObject({ ok: true, message: { target: { target: { name: "authz-fixture" } } } });
      const executions = await client.call("SearchExecutions", {}, viewer.token);
      expect(executions).toMatchObject({
        ok: true,
        message: { result: [{ details: { id: fixture.executionId }, execution: { targets: [fixture.targetId] } }] },
      });
    }
  });

  it("denies IAM_OWNER_VIEWER every create, patch, delete and put (PermissionDenied, REST 403)", async () => {
    const viewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      for (const [method, , request] of RPCS.filter(([, a]) => a === "write")) {
        expectDenied(await client.call(method, request({ ...fixture, protocol }), viewer.token), `${protocol} ${method}`);
      }
    }
    await expectFixtureUntouched();
  });

  it("denies IAM_OWNER_VIEWER a write even when the target does not exist (permission before lookup)", async () => {
    const viewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    for (const protocol of ["grpc", "rest"] as const) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      expectDenied(await client.call("DeleteTarget", { id: "does-not-exist" }, viewer.token), `${protocol} DeleteTarget`);
      expectDenied(await client.call("PatchTarget", { id: "does-not-exist", target: { name: "x" } }, viewer.token), `${protocol} PatchTarget`);
    }
  });

  const powerless: [string, (s: TestServer) => { context: "system" | "instance" | "org"; contextId?: string; roles: string[] }[]][] = [
    ["ORG_OWNER of the default organization", (s) => [{ context: "org", contextId: s.defaultOrgId, roles: ["ORG_OWNER"] }]],
    ["ORG_OWNER_VIEWER of the default organization", (s) => [{ context: "org", contextId: s.defaultOrgId, roles: ["ORG_OWNER_VIEWER"] }]],
    ["ORG_OWNER and ORG_OWNER_VIEWER together", (s) => [{ context: "org", contextId: s.defaultOrgId, roles: ["ORG_OWNER", "ORG_OWNER_VIEWER"] }]],
    ["a user without memberships", () => []],
  ];

  it.each(powerless)("denies %s every RPC, reads included (PermissionDenied, REST 403)", async (_label, roles) => {
    const user = await server.createUser({ roles: roles(server) });
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      for (const [method, , request] of RPCS) {
        expectDenied(await client.call(method, request({ ...fixture, protocol }), user.token), `${protocol} ${method}`);
      }
    }
    await expectFixtureUntouched();
  });

  it("gives a viewer who also owns an organization no more than read access", async () => {
    const user = await server.createUser({
      roles: [
        { context: "instance", roles: ["IAM_OWNER_VIEWER"] },
        { context: "org", contextId: server.defaultOrgId, roles: ["ORG_OWNER"] },
      ],
    });
    for (const protocol of ["grpc", "rest"] as const) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      for (const [method, access, request] of RPCS) {
        const result = await client.call(method, request({ ...fixture, protocol }), user.token);
        if (access === "read") expect(result, `${protocol} ${method}`).toMatchObject({ ok: true });
        else expectDenied(result, `${protocol} ${method}`);
      }
    }
    await expectFixtureUntouched();
  });

  it("answers a denied REST call with an rpcStatus body", async () => {
    const user = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    const res = await fetch(`${server.baseUrl}/resources/v3alpha/targets/${fixture.targetId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { code: number; message: string };
    expect(body.code).toBe(Code.PermissionDenied);
    expect(typeof body.message).toBe("string");
    expect(body.message.length).toBeGreaterThan(0);
  });
});
