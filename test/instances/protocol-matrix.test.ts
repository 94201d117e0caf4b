import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { at, DAY_MS, humanAdmin, INSTANCES, instanceJson, PROTOCOLS, type CallResult, type Msg, type Protocol } from "./helpers.js";

type Step = { result: CallResult; status: number };

/** Values that differ by nature between runs; compared by shape elsewhere. */
const MASKED = ["changeDate", "creationDate", "timestamp", "processedSequence", "adminPat"];

function comparable(result: CallResult, names: Map<string, string>): unknown {
  const swap = (text: string) => {
    let out = text;
    // Longest first, so that no name is replaced inside a longer one.
    for (const [value, name] of [...names].sort((a, b) => b[0].length - a[0].length)) out = out.replaceAll(value, name);
    return out;
  };
  if (!result.ok) return { code: Code[result.code], message: swap(result.message) };
  return JSON.parse(swap(JSON.stringify(result.message, (key, value) => (MASKED.includes(key) ? "*" : value))));
}

/**
 * Every PlatformInstances RPC over gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST:
 * the same scenario on each gives the same answers, and REST the documented statuses
 * (201 for creations, 404, 409, 400, 429 for a blocked instance).
 */
describe.each(DATABASE_KINDS)("every PlatformInstances RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  const EXP = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * DAY_MS).toISOString().replace(".000Z", "Z");
  const scenarios = new Map<Protocol, { steps: Record<string, Step>; names: Map<string, string> }>();

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
  });
  afterAll(() => server?.close());

  async function scenario(protocol: Protocol) {
    const client = at(INSTANCES, protocol, "localhost", port);
    const steps: Record<string, Step> = {};
    const [d1, d2, d3] = ["one", "two", "three"].map((n) => `pm-${protocol}-${n}.${kind}.example`) as [string, string, string];
    const names = new Map<string, string>([
      [d1, "<d1>"],
      [d2, "<d2>"],
      [d3, "<d3>"],
      [server.instanceId, "<first>"],
    ]);
    const run = async (step: string, status: number, method: string, req: Msg, opts: { host?: string; token?: string | null } = {}) => {
      const c = opts.host ? at(INSTANCES, protocol, opts.host, port) : client;
      const result = await c.call(method, req, opts.token === null ? undefined : (opts.token ?? server.adminToken));
      steps[step] = { result, status };
      return result;
    };

    const created = await run("create", 201, "CreateInstance", {
      instance: instanceJson([d1, d2], {
        name: "Matrix",
        defaultLanguage: "de",
        passwordPolicy: { minLength: 6, requireNumber: true },
        admin: { user: humanAdmin("boss", "secret1"), patExpirationDate: EXP },
      }),
    });
    expect(created, `${protocol} create`).toMatchObject({ ok: true });
    const m = (created as { message: Msg }).message;
    const id = String(m.details.id);
    const pat = String(m.adminPat);
    names.set(id, "<id>").set(String(m.orgId), "<org>").set(String(m.adminUserId), "<admin>");

    await run("createTaken", 409, "CreateInstance", { instance: instanceJson([d3, d1.toUpperCase()]) });
    await run("createInvalid", 400, "CreateInstance", { instance: instanceJson([d3], { name: "" }) });
    await run("createWeakPassword", 400, "CreateInstance", { instance: instanceJson([d3], { admin: { user: humanAdmin("weak", "abc") } }) });
    await run("createUnauthenticated", 401, "CreateInstance", { instance: instanceJson([d3]) }, { token: null });
    await run("get", 200, "GetInstance", { id });
    await run("getMissing", 404, "GetInstance", { id: "no-such-instance" });
    await run("getOnNewHost", 200, "GetInstance", { id }, { host: d2, token: pat });
    await run("search", 200, "SearchInstances", { filters: [{ inIds: { ids: [id] } }] });
    await run("searchDomain", 200, "SearchInstances", {
      filters: [{ domain: { value: `PM-${protocol.toUpperCase()}-TWO`, method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }],
      sortingColumn: "INSTANCE_FIELD_NAME_NAME",
      query: { asc: true, limit: 5 },
    });
    await run("searchNothing", 200, "SearchInstances", { filters: [{ inIds: { ids: [id] } }, { state: { state: "INSTANCE_STATE_BLOCKED" } }] });
    await run("patch", 200, "PatchInstance", { id, instance: { name: "Matrix 2", defaultLanguage: "fr" } });
    await run("patchMissing", 404, "PatchInstance", { id: "no-such-instance", instance: { name: "x" } });
    await run("patchInvalid", 400, "PatchInstance", { id, instance: { name: "" } });
    await run("addDomain", 201, "AddInstanceDomain", { id, domain: { domain: d3 } });
    await run("addTaken", 409, "AddInstanceDomain", { id, domain: { domain: "localhost" } });
    await run("addMissing", 404, "AddInstanceDomain", { id: "no-such-instance", domain: { domain: `x.${d3}` } });
    await run("addInvalid", 400, "AddInstanceDomain", { id, domain: { domain: "not a host" } });
    await run("setPrimary", 200, "SetPrimaryInstanceDomain", { id, domain: d3 });
    await run("setPrimaryMissing", 404, "SetPrimaryInstanceDomain", { id, domain: "nope.example" });
    await run("removePrimary", 400, "RemoveInstanceDomain", { id, domain: d3 });
    await run("remove", 200, "RemoveInstanceDomain", { id, domain: d1 });
    await run("removeMissing", 404, "RemoveInstanceDomain", { id, domain: d1 });
    await run("removedHost", 404, "GetInstance", { id }, { host: d1, token: pat });
    await run("getAfterDomains", 200, "GetInstance", { id });
    await run("limitBlock", 200, "Limit", { id, limits: { block: true, auditLogRetention: "3600s" } });
    await run("blockedHost", 429, "GetInstance", { id }, { host: d2, token: pat });
    await run("blockedHostAnonymous", 429, "SearchInstances", {}, { host: d3, token: null });
    await run("blockedSystemCtx", 200, "SearchInstances", { filters: [{ state: { state: "INSTANCE_STATE_BLOCKED" } }], ctx: { system: true } });
    await run("limitUnblock", 200, "Limit", { id, limits: { block: false } });
    await run("unblockedHost", 200, "GetInstance", { id }, { host: d2, token: pat });
    await run("limitMissing", 404, "Limit", { id: "no-such-instance", limits: { block: true } });
    await run("limitInvalid", 400, "Limit", { id, limits: { auditLogRetention: "-1s" } });
    await run("bulk", 200, "BulkLimit", { limits: { instanceIds: [id, server.instanceId], auditLogRetention: "0s" } });
    await run("bulkMissing", 404, "BulkLimit", { limits: { instanceIds: [id, "no-such-instance"], block: true } });
    await run("bulkInvalid", 400, "BulkLimit", { limits: { instanceIds: [id, id] } });
    await run("getAfterLimits", 200, "GetInstance", { id });
    await run("deleteOwn", 400, "DeleteInstance", { id: server.instanceId });
    await run("deleteByIamOwner", 403, "DeleteInstance", { id }, { host: d2, token: pat });
    await run("delete", 200, "DeleteInstance", { id });
    await run("deleteAgain", 404, "DeleteInstance", { id });
    await run("deletedHost", 404, "GetInstance", { id }, { host: d2, token: pat });
    await run("getDeleted", 404, "GetInstance", { id });
    return { steps, names };
  }

  it.each(PROTOCOLS)("runs the scenario over %s with the expected outcome at every step", async (protocol) => {
    const { steps, names } = await scenario(protocol);
    scenarios.set(protocol, { steps, names });
    for (const [step, { result, status }] of Object.entries(steps)) {
      const label = `${protocol} ${step}: ${JSON.stringify(result)}`;
      expect(result.ok, label).toBe(status < 300);
      if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(status);
    }
    // Spot checks of what the answers say.
    const msg = (step: string): Msg => (steps[step]!.result as { message: Msg }).message;
    expect(msg("create").details.resourceOwner).toEqual({ type: "OWNER_TYPE_SYSTEM" });
    expect(msg("get").instance).toMatchObject({
      name: "Matrix",
      state: "INSTANCE_STATE_ACTIVE",
      defaultLanguage: "de",
      passwordPolicy: { minLength: 6, requireNumber: true },
    });
    expect(msg("search").result).toHaveLength(1);
    expect(msg("searchDomain").result).toHaveLength(1);
    expect(msg("searchNothing").result ?? []).toEqual([]);
    expect(msg("getAfterDomains").instance.domains.map((d: Msg) => [d.domain, Boolean(d.isPrimary)])).toEqual([
      [`pm-${protocol}-three.${kind}.example`, true],
      [`pm-${protocol}-two.${kind}.example`, false],
    ]);
    expect(msg("blockedSystemCtx").result.map((r: Msg) => r.details.id)).toContain(msg("create").details.id);
    expect(msg("getAfterLimits").instance).toMatchObject({ name: "Matrix 2", defaultLanguage: "fr", state: "INSTANCE_STATE_ACTIVE" });
    expect(msg("getAfterLimits").instance.auditLogRetention).toBeUndefined();
    expect(msg("bulk").details.map((d: Msg) => d.id)).toEqual([msg("create").details.id, server.instanceId]);
    expect((steps.blockedHost!.result as { message: string }).message).toBe("instance is blocked");
  });

  it("answers the same on every protocol", () => {
    const reference = scenarios.get("grpc");
    expect(reference, "the gRPC scenario ran").toBeDefined();
    for (const protocol of PROTOCOLS.filter((p) => p !== "grpc")) {
      const other = scenarios.get(protocol);
      expect(other, `the ${protocol} scenario ran`).toBeDefined();
      for (const step of Object.keys(reference!.steps)) {
        const theirs = comparable(other!.steps[step]!.result, other!.names);
        const ours = comparable(reference!.steps[step]!.result, reference!.names);
        expect(theirs, `${protocol} ${step}`).toEqual(ours);
      }
    }
  });
});
