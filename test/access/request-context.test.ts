import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { h1 } from "../server/raw-http.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The request context (`ctx`): which instance a PlatformActions call acts in. Absent, the
 * Host's; `instanceId` or `instanceDomain` another one, for system members only; any
 * other kind of context is not one PlatformActions acts in.
 */
const webhook = (name: string): JsonObject => ({ target: { name, restWebhook: { url: "https://example.com/hook" } } });
const ownerOf = (r: CallResult) => (r.ok ? String(((r.message.details as JsonObject).resourceOwner as JsonObject).id) : undefined);

describe.each(DATABASE_KINDS)("the request context of PlatformActions (%s)", (kind) => {
  let server: TestServer;
  let b: Awaited<ReturnType<TestServer["createInstance"]>>;
  let ownerOfA: { token: string };
  let names = 0;
  const onA = (protocol: (typeof PROTOCOLS)[number]) => protocolClient(PlatformActions, protocol, server.baseUrl);

  beforeAll(async () => {
    server = await startTestServer(kind);
    b = await server.createInstance("ctx-b.example");
    ownerOfA = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("a system member acts in another instance by its id or domain over %s", async (protocol) => {
    for (const ctx of [{ instanceId: b.instanceId }, { instanceDomain: "CTX-B.example" }] as JsonObject[]) {
      const made = await onA(protocol).call("CreateTarget", { ...webhook(`ctx-${protocol}-${++names}`), ctx }, server.adminToken);
      expect(made, JSON.stringify(ctx)).toMatchObject({ ok: true });
      expect(ownerOf(made)).toBe(b.instanceId);
      const listed = await onA(protocol).call("SearchTargets", { ctx }, server.adminToken);
      expect(JSON.stringify(listed)).toContain(`ctx-${protocol}-${names}`);
    }
  });

  it.each(PROTOCOLS)("naming the Host's own instance changes nothing, for any member, over %s", async (protocol) => {
    const made = await onA(protocol).call("CreateTarget", { ...webhook(`own-${protocol}`), ctx: { instanceId: server.instanceId } }, ownerOfA.token);
    expect(made).toMatchObject({ ok: true });
    expect(ownerOf(made)).toBe(server.instanceId);
  });

  it.each(PROTOCOLS)("another instance is NotFound to an instance owner, worded as for one that does not exist, over %s", async (protocol) => {
    const other = await onA(protocol).call("SearchTargets", { ctx: { instanceId: b.instanceId } }, ownerOfA.token);
    const missing = await onA(protocol).call("SearchTargets", { ctx: { instanceId: "01a20000-0000-7000-8000-000000000000" } }, ownerOfA.token);
    expect(other).toMatchObject({ ok: false, code: Code.NotFound });
    expect(missing).toMatchObject({ ok: false, code: Code.NotFound });
    const wording = (r: CallResult) => (r.ok ? "" : r.message.replace(/"[^"]*"/, '"…"'));
    expect(wording(other)).toBe(wording(missing));
    if (protocol === "rest") expect(other.httpStatus).toBe(404);
    const byDomain = await onA(protocol).call("SearchTargets", { ctx: { instanceDomain: "ctx-b.example" } }, ownerOfA.token);
    expect(byDomain).toMatchObject({ ok: false, code: Code.NotFound });
  });

  it.each(PROTOCOLS)("organization and system contexts are InvalidArgument over %s", async (protocol) => {
    for (const ctx of [{ orgId: server.defaultOrgId }, { orgDomain: "x.example" }, { system: true }] as JsonObject[]) {
      const result = await onA(protocol).call("SearchTargets", { ctx }, server.adminToken);
      expect(result, JSON.stringify(ctx)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      if (protocol === "rest") expect(result.httpStatus).toBe(400);
    }
  });

  it.each(["grpc", "connect"] as const)("an empty ctx is InvalidArgument over %s", async (protocol) => {
    expect(await onA(protocol).call("SearchTargets", { ctx: {} }, server.adminToken)).toMatchObject({ ok: false, code: Code.InvalidArgument });
  });

  it("REST takes ctx from the query string, in lowerCamel and snake_case", async () => {
    for (const query of [
      `ctx.instanceId=${b.instanceId}`,
      `ctx.instance_id=${b.instanceId}`,
      "ctx.instanceDomain=ctx-b.example",
      "ctx.instance_domain=ctx-b.example",
    ]) {
      const res = await h1(`${server.baseUrl}/resources/v3alpha/targets/_search?${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
        body: "[]",
      });
      expect(res.status, query).toBe(200);
      const owners = (JSON.parse(res.body) as { result?: { details: { resourceOwner: { id: string } } }[] }).result ?? [];
      expect(owners.length, query).toBeGreaterThan(0);
      for (const r of owners) expect(r.details.resourceOwner.id).toBe(b.instanceId);
    }
  });

  it("feature flags are those of the instance the call acts in", async () => {
    const setFlag = (enabled: boolean) => setInstanceFlag(server, b.instanceId, "actions", enabled);
    await setFlag(false);
    try {
      const inB = await onA("grpc").call("SearchTargets", { ctx: { instanceId: b.instanceId } }, server.adminToken);
      expect(inB).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await onA("grpc").call("SearchTargets", {}, server.adminToken)).toMatchObject({ ok: true });
    } finally {
      await setFlag(true);
    }
  });
});
