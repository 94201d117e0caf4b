import type { DescService } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  at,
  createInstance,
  failed,
  idsOf,
  INSTANCES,
  MEMBERS,
  must,
  ok,
  ORGS,
  outcome,
  PROTOCOLS,
  uniqueDomain,
  USERS,
  type CallResult,
  type Created,
  type Msg,
} from "./helpers.js";

/** Calls of every kind of service; all of them must be stopped at a blocked instance's door. */
const CALLS: [DescService, string, Msg][] = [
  [INSTANCES, "SearchInstances", {}],
  [USERS, "SearchUsers", {}],
  [ORGS, "SearchOrganizations", {}],
  [MEMBERS, "ListAvailableRoles", {}],
  [PlatformActions, "SearchTargets", {}],
  // Even one that validation would refuse: the block comes first.
  [INSTANCES, "GetInstance", { id: "x".repeat(201) }],
];

function expectBlocked(r: CallResult, label: string) {
  const f = failed(r, Code.ResourceExhausted, label);
  expect(f.message, label).toBe("instance is blocked");
}

/**
 * Limits: a blocked instance answers every call on its hosts with ResourceExhausted (429),
 * except calls in the system context; unblocking restores it at once. BulkLimit changes all
 * instances or none. The audit log retention is stored and returned; zero removes it.
 */
describe.each(DATABASE_KINDS)("instance limits (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  let b: Created;
  let bSecond: string;
  let c: Created;
  /** A SYSTEM_OWNER who is a user of instance B (its tokens work on B's hosts). */
  let bSystem: string;
  const sys = (protocol: (typeof PROTOCOLS)[number] = "grpc") => at(INSTANCES, protocol, "localhost", port);
  const call = (method: string, req: Msg) => sys().call(method, req, server.adminToken);
  const get = async (id: string) => (await must(call("GetInstance", { id }), `get ${id}`)).instance;

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
    bSecond = uniqueDomain("lim-b2");
    b = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-b"), bSecond]);
    c = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-c")]);
    bSystem = (await server.createUser({ instanceId: b.id, roles: [{ context: "system", contextId: "", roles: ["SYSTEM_OWNER"] }] })).token;
  });
  afterAll(() => server?.close());

  it("blocks an instance: every call on each of its hosts is ResourceExhausted on every protocol, with any token or none; unblocking restores it at once", async () => {
    // Warm the caches: the host and the token were just used.
    ok(await at(USERS, "grpc", b.domain, port).call("SearchUsers", {}, b.adminPat), "before");
    const before = await get(b.id);
    const limited = ok(await sys("rest").call("Limit", { id: b.id, limits: { block: true } }, server.adminToken));
    expect(limited.details).toMatchObject({ id: b.id, sequence: String(Number(before.details.sequence) + 1), resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
    expect((await get(b.id)).state).toBe("INSTANCE_STATE_BLOCKED");

    for (const protocol of PROTOCOLS) {
      for (const host of [b.domain, bSecond]) {
        for (const [service, method, req] of CALLS) {
          for (const [who, token] of [
            ["admin", b.adminPat],
            ["system member", bSystem],
            ["nobody", undefined],
            ["unknown token", "x".repeat(43)],
            ["other instance's token", c.adminPat],
          ] as const) {
            expectBlocked(await at(service, protocol, host, port).call(method, req, token), `${protocol} ${host} ${service.name}.${method} as ${who}`);
          }
        }
      }
    }
    // The other instances are not affected.
    ok(await at(USERS, "grpc", c.domain, port).call("SearchUsers", {}, c.adminPat), "C");
    ok(await at(USERS, "grpc", "localhost", port).call("SearchUsers", {}, server.adminToken), "first instance");
    // Searches by state.
    const blocked = ok(await call("SearchInstances", { filters: [{ state: { state: "INSTANCE_STATE_BLOCKED" } }] }));
    expect(idsOf(blocked)).toEqual([b.id]);
    const active = ok(await call("SearchInstances", { filters: [{ state: { state: "INSTANCE_STATE_ACTIVE" } }] }));
    expect(idsOf(active)).not.toContain(b.id);
    expect(idsOf(active)).toEqual(expect.arrayContaining([c.id, server.instanceId]));

    ok(await sys("connect").call("Limit", { id: b.id, limits: { block: false } }, server.adminToken));
    expect((await get(b.id)).state).toBe("INSTANCE_STATE_ACTIVE");
    for (const protocol of PROTOCOLS) {
      for (const host of [b.domain, bSecond])
        ok(await at(USERS, protocol, host, port).call("SearchUsers", {}, b.adminPat), `${protocol} ${host} after unblocking`);
    }
  });

  it("lets system-context calls through a blocked instance's hosts: its system member reads it and lifts the block", async () => {
    ok(await call("Limit", { id: b.id, limits: { block: true } }));
    const onB = (protocol: (typeof PROTOCOLS)[number]) => at(INSTANCES, protocol, b.domain, port);
    for (const protocol of PROTOCOLS) {
      const got = ok(await onB(protocol).call("GetInstance", { id: b.id, ctx: { system: true } }, bSystem), `${protocol} ctx.system`);
      expect(got.instance.state).toBe("INSTANCE_STATE_BLOCKED");
      ok(
        await onB(protocol).call("SearchInstances", { filters: [{ inIds: { ids: [b.id] } }], ctx: { system: true } }, bSystem),
        `${protocol} search ctx.system`,
      );
      ok(await at(MEMBERS, protocol, b.domain, port).call("SearchMemberships", { ctx: { system: true } }, bSystem), `${protocol} memberships ctx.system`);
      // The same member without ctx.system is blocked.
      expectBlocked(await onB(protocol).call("GetInstance", { id: b.id }, bSystem), `${protocol} without ctx`);
      expectBlocked(await onB(protocol).call("GetInstance", { id: b.id, ctx: { instanceId: b.id } }, bSystem), `${protocol} ctx.instanceId`);
      // ctx.system does not open the door to anyone else.
      for (const [who, token] of [
        ["IAM_OWNER", b.adminPat],
        ["nobody", undefined],
      ] as const) {
        const r = await onB(protocol).call("GetInstance", { id: b.id, ctx: { system: true } }, token);
        expect(r.ok, `${protocol} ctx.system as ${who}: ${JSON.stringify(r)}`).toBe(false);
        expect([Code.ResourceExhausted, Code.PermissionDenied, Code.Unauthenticated], `${protocol} ${who}`).toContain((r as { code: Code }).code);
      }
    }
    ok(await onB("rest").call("Limit", { id: b.id, limits: { block: false }, ctx: { system: true } }, bSystem), "unblock with ctx.system over REST");
    // Restored at once, for everyone.
    ok(await at(USERS, "grpc", b.domain, port).call("SearchUsers", {}, b.adminPat), "admin after unblocking");
    ok(await onB("grpc").call("GetInstance", { id: b.id }, bSystem), "system member without ctx after unblocking");
  });

  it("lets a system member lift the block of the very instance it calls on, with ctx.system", async () => {
    try {
      ok(await call("Limit", { id: server.instanceId, limits: { block: true } }), "block the first instance");
      expectBlocked(await call("GetInstance", { id: server.instanceId }), "without ctx");
      expectBlocked(await at(USERS, "rest", "localhost", port).call("SearchUsers", {}, server.adminToken), "users, REST");
      // Other instances keep serving.
      ok(await at(USERS, "grpc", c.domain, port).call("SearchUsers", {}, c.adminPat));
      ok(await call("Limit", { id: server.instanceId, limits: { block: false }, ctx: { system: true } }), "unblock with ctx.system");
      ok(await call("GetInstance", { id: server.instanceId }), "restored at once");
    } finally {
      // Whatever happened above, the other tests need the first instance.
      await server.service.store.db.updateTable("instances").set({ blocked: false }).where("id", "=", server.instanceId).execute();
    }
  });

  it("lets a system member of another, unblocked instance read and unblock a blocked one from its own host", async () => {
    ok(await at(INSTANCES, "grpc", b.domain, port).call("Limit", { id: c.id, limits: { block: true } }, bSystem), "B's system member blocks C");
    expectBlocked(await at(USERS, "grpc", c.domain, port).call("SearchUsers", {}, c.adminPat), "C");
    for (const protocol of PROTOCOLS) {
      const got = ok(await sys(protocol).call("GetInstance", { id: c.id }, server.adminToken), protocol);
      expect(got.instance.state).toBe("INSTANCE_STATE_BLOCKED");
    }
    ok(await sys("grpc-web").call("Limit", { id: c.id, limits: { block: false } }, server.adminToken));
    ok(await at(USERS, "grpc", c.domain, port).call("SearchUsers", {}, c.adminPat), "C restored");
  });

  it("BulkLimit changes every instance or none: one unknown id is NotFound and nothing changed", async () => {
    const d = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-d")]);
    const e = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-e")]);
    const start = { d: await get(d.id), e: await get(e.id) };
    const events = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from events where instance_id in (${d.id}, ${e.id})`.execute(server.service.store.db)).rows[0]!.n,
      );
    const eventsBefore = await events();

    for (const protocol of PROTOCOLS) {
      for (const ids of [
        [d.id, e.id, "no-such-instance"],
        ["no-such-instance", e.id],
        [e.id, d.id, `${d.id}x`],
      ]) {
        const r = await sys(protocol).call("BulkLimit", { limits: { instanceIds: ids, block: true, auditLogRetention: "3600s" } }, server.adminToken);
        const f = failed(r, Code.NotFound, `${protocol} ${ids.length}`);
        expect(f.message).toMatch(/no-such-instance|x not found/);
      }
    }
    expect(await events()).toBe(eventsBefore);
    for (const [x, was] of [
      [d, start.d],
      [e, start.e],
    ] as const) {
      const now = await get(x.id);
      expect(now.state).toBe("INSTANCE_STATE_ACTIVE");
      expect(now.auditLogRetention).toBeUndefined();
      expect(now.details.sequence).toBe(was.details.sequence);
      ok(await at(USERS, "grpc", x.domain, port).call("SearchUsers", {}, x.adminPat), "still served");
    }

    // All of them: the details come in the order asked.
    const done = ok(await sys("rest").call("BulkLimit", { limits: { instanceIds: [e.id, d.id], block: true, auditLogRetention: "3600s" } }, server.adminToken));
    expect(done.details.map((x: Msg) => x.id)).toEqual([e.id, d.id]);
    // Two events each (blocked, retention set): the sequence counts events.
    expect(done.details.map((x: Msg) => x.sequence)).toEqual([String(Number(start.e.details.sequence) + 2), String(Number(start.d.details.sequence) + 2)]);
    for (const x of [d, e]) {
      expect(await get(x.id)).toMatchObject({ state: "INSTANCE_STATE_BLOCKED", auditLogRetention: "3600s" });
      expectBlocked(await at(USERS, "grpc", x.domain, port).call("SearchUsers", {}, x.adminPat), "bulk-blocked");
    }
    // Only what differs changes: D already blocked, E unblocked first.
    ok(await call("Limit", { id: e.id, limits: { block: false } }));
    const dSeq = (await get(d.id)).details.sequence;
    const mixed = ok(await call("BulkLimit", { limits: { instanceIds: [d.id, e.id], block: true } }));
    expect(mixed.details[0].sequence).toBe(dSeq);
    // Unblock both and remove the retention (zero).
    ok(await call("BulkLimit", { limits: { instanceIds: [d.id, e.id], block: false, auditLogRetention: "0s" } }));
    for (const x of [d, e]) {
      const now = await get(x.id);
      expect(now.state).toBe("INSTANCE_STATE_ACTIVE");
      expect(now.auditLogRetention).toBeUndefined();
      ok(await at(USERS, "grpc", x.domain, port).call("SearchUsers", {}, x.adminPat), "bulk-unblocked");
    }
  });

  it("stores and returns the audit log retention; other limits keep it; zero removes it; repeating it appends nothing", async () => {
    const f = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-f")]);
    const seq = async () => Number((await get(f.id)).details.sequence);
    ok(await call("Limit", { id: f.id, limits: { auditLogRetention: "86400s" } }));
    expect(await get(f.id)).toMatchObject({ auditLogRetention: "86400s", state: "INSTANCE_STATE_ACTIVE" });
    // Returned by searches too, on every protocol.
    for (const protocol of PROTOCOLS) {
      const found = ok(await sys(protocol).call("SearchInstances", { filters: [{ inIds: { ids: [f.id] } }] }, server.adminToken), protocol);
      expect(found.result[0].auditLogRetention, protocol).toBe("86400s");
    }
    ok(await call("Limit", { id: f.id, limits: { block: true } }));
    expect(await get(f.id)).toMatchObject({ auditLogRetention: "86400s", state: "INSTANCE_STATE_BLOCKED" });
    ok(await call("Limit", { id: f.id, limits: { block: false } }));
    expect(await get(f.id)).toMatchObject({ auditLogRetention: "86400s", state: "INSTANCE_STATE_ACTIVE" });

    // The same again, or nothing at all: success without an event.
    const s1 = await seq();
    expect(ok(await call("Limit", { id: f.id, limits: { auditLogRetention: "86400s" } })).details.sequence).toBe(String(s1));
    expect(ok(await call("Limit", { id: f.id, limits: {} })).details.sequence).toBe(String(s1));
    expect(ok(await call("Limit", { id: f.id, limits: { block: false } })).details.sequence).toBe(String(s1));
    expect(await seq()).toBe(s1);

    // Fractions and the maximum (ten years of 365.25 days).
    ok(await call("Limit", { id: f.id, limits: { auditLogRetention: "1.500s" } }));
    expect((await get(f.id)).auditLogRetention).toBe("1.500s");
    ok(await call("Limit", { id: f.id, limits: { auditLogRetention: "315576000s" } }));
    expect((await get(f.id)).auditLogRetention).toBe("315576000s");

    // Zero removes the limit, over every protocol.
    for (const protocol of PROTOCOLS) {
      ok(await sys(protocol).call("Limit", { id: f.id, limits: { auditLogRetention: "60s" } }, server.adminToken));
      expect((await get(f.id)).auditLogRetention, protocol).toBe("60s");
      ok(await sys(protocol).call("Limit", { id: f.id, limits: { auditLogRetention: "0s" } }, server.adminToken), protocol);
      expect((await get(f.id)).auditLogRetention, `${protocol} after zero`).toBeUndefined();
    }
    const s2 = await seq();
    expect(ok(await call("Limit", { id: f.id, limits: { auditLogRetention: "0s" } })).details.sequence).toBe(String(s2));
    const row = await server.service.store.db.selectFrom("instances").select("audit_log_retention_ms").where("id", "=", f.id).executeTakeFirstOrThrow();
    expect(row.audit_log_retention_ms).toBeNull();

    for (const protocol of PROTOCOLS)
      failed(await sys(protocol).call("Limit", { id: "no-such-instance", limits: { block: true } }, server.adminToken), Code.NotFound, protocol);
  });

  // InstanceState.BLOCKED: "every call but those in the system context is ResourceExhausted";
  // ctx.instanceId is an instance context, not the system context, wherever it is sent from.
  it("a call acting in a blocked instance through ctx.instanceId / ctx.instanceDomain is ResourceExhausted too", async () => {
    const g = await createInstance(sys(), server.adminToken, [uniqueDomain("lim-g")]);
    ok(await call("Limit", { id: g.id, limits: { block: true } }));
    try {
      const users = at(USERS, "grpc", "localhost", port);
      expectBlocked(await users.call("SearchUsers", { ctx: { instanceId: g.id } }, server.adminToken), "SearchUsers in the blocked instance");
      expectBlocked(
        await users.call("CreateUser", { user: { username: "sneaked-in", machine: { name: "x" } }, ctx: { instanceDomain: g.domain } }, server.adminToken),
        "CreateUser in the blocked instance",
      );
      const created = await server.service.store.db
        .selectFrom("users")
        .select("id")
        .where("instance_id", "=", g.id)
        .where("username", "=", "sneaked-in")
        .execute();
      expect(created).toEqual([]);
    } finally {
      ok(await call("Limit", { id: g.id, limits: { block: false } }));
    }
  });

  it("a blocked instance cannot be changed by its own administrators, and stays blocked until a system member acts", async () => {
    ok(await call("Limit", { id: b.id, limits: { block: true } }));
    const r = await at(INSTANCES, "grpc", b.domain, port).call("PatchInstance", { id: b.id, instance: { name: "sneaky" } }, b.adminPat);
    expectBlocked(r, "patch by its IAM_OWNER");
    expect((await get(b.id)).name).not.toBe("sneaky");
    // Its own IAM_OWNER cannot lift it even were it let through: it holds no system.instance.write.
    expect(outcome(await at(INSTANCES, "grpc", b.domain, port).call("Limit", { id: b.id, limits: { block: false } }, b.adminPat))).toBe("ResourceExhausted");
    ok(await call("Limit", { id: b.id, limits: { block: false } }));
  });
});
