import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  at,
  createInstance,
  failed,
  idsOf,
  INSTANCES,
  instanceJson,
  must,
  ok,
  outcome,
  PROTOCOLS,
  totalOf,
  uniqueDomain,
  type CallResult,
  type Created,
  type Msg,
  type Protocol,
} from "./helpers.js";

/**
 * Who may do what with instances. System members (SYSTEM_OWNER) everything, on any
 * instance, from their own instance's host. An instance's IAM_OWNER reads and patches its
 * own instance; another instance is NotFound to it, exactly like one that does not exist
 * (never PermissionDenied: existence must not leak). Callers who hold instance.read nowhere
 * are PermissionDenied. Searches show an administrator its own instance only.
 */
describe.each(DATABASE_KINDS)("instance permissions (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  /** A: the first instance (the system member's); B: the caller's instance; C: someone else's. */
  let b: Created;
  let c: Created;
  const callers: Record<string, string> = {};
  const MISSING = "01900000-0000-7000-8000-000000000000";

  const onB = (protocol: Protocol = "grpc") => at(INSTANCES, protocol, b.domain, port);
  const asB = (who: string, method: string, req: Msg, protocol: Protocol = "grpc") => onB(protocol).call(method, req, callers[who]);

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
    const sys = at(INSTANCES, "grpc", "localhost", port);
    b = await createInstance(sys, server.adminToken, [uniqueDomain("acc-b"), uniqueDomain("acc-b-second")]);
    c = await createInstance(sys, server.adminToken, [uniqueDomain("acc-c")]);
    callers.iamOwner = b.adminPat;
    callers.viewer = (await server.createUser({ instanceId: b.id, roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] })).token;
    callers.orgOwner = (await server.createUser({ instanceId: b.id, roles: [{ context: "org", contextId: b.orgId, roles: ["ORG_OWNER"] }] })).token;
    callers.orgViewer = (await server.createUser({ instanceId: b.id, roles: [{ context: "org", contextId: b.orgId, roles: ["ORG_OWNER_VIEWER"] }] })).token;
    callers.plain = (await server.createUser({ instanceId: b.id })).token;
    callers.system = (await server.createUser({ instanceId: b.id, roles: [{ context: "system", contextId: "", roles: ["SYSTEM_OWNER"] }] })).token;
  });
  afterAll(() => server?.close());

  /** Outcome names, in the same order as `whos`. */
  const outcomes = async (whos: string[], method: string, req: Msg, protocol: Protocol = "grpc") => {
    const result: Record<string, string> = {};
    for (const who of whos) result[who] = outcome(await asB(who, method, req, protocol));
    return result;
  };

  it("GetInstance: own instance for IAM_OWNER and its viewer; another or a missing one NotFound to them; PermissionDenied to who holds instance.read nowhere", async () => {
    const whos = ["system", "iamOwner", "viewer", "orgOwner", "orgViewer", "plain"];
    for (const protocol of PROTOCOLS) {
      expect(await outcomes(whos, "GetInstance", { id: b.id }, protocol), `${protocol} own`).toEqual({
        system: "ok",
        iamOwner: "ok",
        viewer: "ok",
        orgOwner: "PermissionDenied",
        orgViewer: "PermissionDenied",
        plain: "PermissionDenied",
      });
      for (const [what, id] of [
        ["other", c.id],
        ["first", server.instanceId],
        ["missing", MISSING],
      ]) {
        expect(await outcomes(whos, "GetInstance", { id }, protocol), `${protocol} ${what}`).toEqual({
          system: what === "missing" ? "NotFound" : "ok",
          iamOwner: "NotFound",
          viewer: "NotFound",
          orgOwner: "PermissionDenied",
          orgViewer: "PermissionDenied",
          plain: "PermissionDenied",
        });
      }
      // Without a token: Unauthenticated, whichever id.
      for (const id of [b.id, c.id, MISSING]) failed(await onB(protocol).call("GetInstance", { id }), Code.Unauthenticated, `${protocol} anonymous`);
    }
    // Another instance and a missing one are told apart by nothing: the same answer but for the id.
    const other = failed(await asB("iamOwner", "GetInstance", { id: c.id }, "rest"), Code.NotFound);
    const missing = failed(await asB("iamOwner", "GetInstance", { id: MISSING }, "rest"), Code.NotFound);
    expect(other.message.replace(c.id, "<id>")).toBe(missing.message.replace(MISSING, "<id>"));
    const denied1 = failed(await asB("orgOwner", "GetInstance", { id: c.id }, "rest"), Code.PermissionDenied);
    const denied2 = failed(await asB("orgOwner", "GetInstance", { id: MISSING }, "rest"), Code.PermissionDenied);
    expect(denied1.message).toBe(denied2.message);
    // The answer describes the instance as owned by the system.
    const own = ok(await asB("iamOwner", "GetInstance", { id: b.id }));
    expect(own.instance.details).toMatchObject({ id: b.id, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
  });

  it("PatchInstance: own instance for IAM_OWNER only; another NotFound to it; PermissionDenied to viewers and organization roles", async () => {
    const whos = ["iamOwner", "viewer", "orgOwner", "plain"];
    for (const protocol of PROTOCOLS) {
      const name = `B patched over ${protocol}`;
      expect(await outcomes(whos, "PatchInstance", { id: b.id, instance: { name } }, protocol), protocol).toEqual({
        iamOwner: "ok",
        viewer: "PermissionDenied",
        orgOwner: "PermissionDenied",
        plain: "PermissionDenied",
      });
      expect((await must(at(INSTANCES, "grpc", "localhost", port).call("GetInstance", { id: b.id }, server.adminToken), "get")).instance.name).toBe(name);
      for (const id of [c.id, server.instanceId, MISSING]) {
        expect(await outcomes(whos, "PatchInstance", { id, instance: { name: "hijacked" } }, protocol), `${protocol} ${id}`).toEqual({
          iamOwner: "NotFound",
          viewer: "PermissionDenied",
          orgOwner: "PermissionDenied",
          plain: "PermissionDenied",
        });
      }
    }
    for (const id of [c.id, server.instanceId]) {
      expect((await must(at(INSTANCES, "grpc", "localhost", port).call("GetInstance", { id }, server.adminToken), "get")).instance.name).not.toBe("hijacked");
    }
    // The system member (of A) patches any instance from its own host.
    ok(await at(INSTANCES, "rest", "localhost", port).call("PatchInstance", { id: c.id, instance: { defaultLanguage: "fr" } }, server.adminToken));
  });

  it("system.instance.* methods are the system members' alone: PermissionDenied to an IAM_OWNER, on its own instance, another or a missing one", async () => {
    const whos = ["iamOwner", "viewer", "orgOwner", "plain"];
    const denied = { iamOwner: "PermissionDenied", viewer: "PermissionDenied", orgOwner: "PermissionDenied", plain: "PermissionDenied" };
    for (const protocol of PROTOCOLS) {
      expect(await outcomes(whos, "CreateInstance", { instance: instanceJson([uniqueDomain("acc-new")]) }, protocol), `${protocol} create`).toEqual(denied);
      expect(await outcomes(whos, "BulkLimit", { limits: { instanceIds: [b.id], block: true } }, protocol), `${protocol} bulk`).toEqual(denied);
      for (const id of [b.id, c.id, MISSING]) {
        const label = `${protocol} ${id === b.id ? "own" : id === c.id ? "other" : "missing"}`;
        expect(await outcomes(whos, "DeleteInstance", { id }, protocol), `${label} delete`).toEqual(denied);
        expect(await outcomes(whos, "AddInstanceDomain", { id, domain: { domain: uniqueDomain("acc-add") } }, protocol), `${label} add domain`).toEqual(denied);
        expect(await outcomes(whos, "RemoveInstanceDomain", { id, domain: b.domain }, protocol), `${label} remove domain`).toEqual(denied);
        expect(await outcomes(whos, "SetPrimaryInstanceDomain", { id, domain: b.domain }, protocol), `${label} set primary`).toEqual(denied);
        expect(await outcomes(whos, "Limit", { id, limits: { block: true } }, protocol), `${label} limit`).toEqual(denied);
      }
      failed(
        await onB(protocol).call("CreateInstance", { instance: instanceJson([uniqueDomain("acc-anon")]) }),
        Code.Unauthenticated,
        `${protocol} anonymous create`,
      );
    }
    // Nothing changed.
    const seen = await must(at(INSTANCES, "grpc", "localhost", port).call("GetInstance", { id: b.id }, server.adminToken), "get");
    expect(seen.instance.state).toBe("INSTANCE_STATE_ACTIVE");
    expect(seen.instance.domains).toHaveLength(2);
    // The same calls succeed for a system member (here one of B, from B's host).
    const d = ok(await asB("system", "CreateInstance", { instance: instanceJson([uniqueDomain("acc-by-b")]) }));
    ok(await asB("system", "Limit", { id: c.id, limits: { block: true } }));
    ok(await asB("system", "BulkLimit", { limits: { instanceIds: [c.id], block: false } }));
    ok(await asB("system", "DeleteInstance", { id: d.details.id }));
  });

  it("SearchInstances: all to system members; only its own instance (and total) to IAM_OWNER and viewer; PermissionDenied to organization roles", async () => {
    const all = ok(await at(INSTANCES, "grpc", "localhost", port).call("SearchInstances", {}, server.adminToken));
    expect(idsOf(all)).toEqual(expect.arrayContaining([server.instanceId, b.id, c.id]));
    expect(totalOf(all)).toBe(idsOf(all).length);
    const fromB = ok(await asB("system", "SearchInstances", {}));
    expect(idsOf(fromB).sort()).toEqual(idsOf(all).sort());

    for (const protocol of PROTOCOLS) {
      for (const who of ["iamOwner", "viewer"]) {
        const label = `${protocol} ${who}`;
        const own = ok(await asB(who, "SearchInstances", {}, protocol), label);
        expect(idsOf(own), label).toEqual([b.id]);
        expect(totalOf(own), label).toBe(1);
        expect(own.details.endOfList, label).toBe(true);
        // Filters that name the others find nothing, and count nothing.
        for (const filters of [
          [{ inIds: { ids: [c.id, server.instanceId] } }],
          [{ domain: { value: c.domain } }],
          [{ domain: { value: "localhost" } }],
          [{ name: { value: "Default" } }],
          [{ name: { value: "acc-c", method: "TEXT_FILTER_METHOD_CONTAINS" } }],
          [{ state: { state: "INSTANCE_STATE_BLOCKED" } }],
        ]) {
          const found = ok(await asB(who, "SearchInstances", { filters }, protocol), `${label} ${JSON.stringify(filters)}`);
          expect(found.result ?? [], `${label} ${JSON.stringify(filters)}`).toEqual([]);
          expect(totalOf(found), `${label} ${JSON.stringify(filters)}`).toBe(0);
        }
        // Paging past its one instance shows nothing more.
        const page2 = ok(await asB(who, "SearchInstances", { query: { offset: 1 } }, protocol));
        expect(page2.result ?? []).toEqual([]);
        expect(totalOf(page2)).toBe(1);
      }
      for (const who of ["orgOwner", "orgViewer", "plain"])
        failed(await asB(who, "SearchInstances", {}, protocol), Code.PermissionDenied, `${protocol} ${who}`);
      // Other instances' changes do not show in the list details either: nothing to count by.
      const before = ok(await asB("iamOwner", "SearchInstances", {}, protocol));
      ok(await at(INSTANCES, "grpc", "localhost", port).call("PatchInstance", { id: c.id, instance: { name: `C changed ${protocol}` } }, server.adminToken));
      ok(
        await at(INSTANCES, "grpc", "localhost", port).call(
          "PatchInstance",
          { id: server.instanceId, instance: { name: `A changed ${protocol}` } },
          server.adminToken,
        ),
      );
      const after = ok(await asB("iamOwner", "SearchInstances", {}, protocol));
      expect({ ...after.details }, `${protocol} list details after other instances changed`).toEqual({ ...before.details });
      failed(await onB(protocol).call("SearchInstances", {}), Code.Unauthenticated, `${protocol} anonymous`);
    }
  });

  it("an IAM_OWNER of another instance cannot guess an instance through the request context, other hosts or its own token", async () => {
    for (const protocol of PROTOCOLS) {
      // ctx naming another instance: NotFound, worded as for one that does not exist.
      const byId = failed(await asB("iamOwner", "GetInstance", { id: b.id, ctx: { instanceId: c.id } }, protocol), Code.NotFound, `${protocol} ctx.instanceId`);
      const byMissingId = failed(
        await asB("iamOwner", "GetInstance", { id: b.id, ctx: { instanceId: MISSING } }, protocol),
        Code.NotFound,
        `${protocol} missing ctx.instanceId`,
      );
      expect(byId.message.replace(c.id, "<id>")).toBe(byMissingId.message.replace(MISSING, "<id>"));
      const byDomain = failed(
        await asB("iamOwner", "SearchInstances", { ctx: { instanceDomain: c.domain } }, protocol),
        Code.NotFound,
        `${protocol} ctx.instanceDomain`,
      );
      const byMissingDomain = failed(
        await asB("iamOwner", "SearchInstances", { ctx: { instanceDomain: "nowhere.example" } }, protocol),
        Code.NotFound,
        `${protocol} missing ctx.instanceDomain`,
      );
      expect(byDomain.message.replace(c.domain, "<d>")).toBe(byMissingDomain.message.replace("nowhere.example", "<d>"));
      // Its own instance through ctx works.
      ok(await asB("iamOwner", "GetInstance", { id: b.id, ctx: { instanceId: b.id } }, protocol), `${protocol} own ctx`);
      // The system context needs a system membership.
      failed(await asB("iamOwner", "SearchInstances", { ctx: { system: true } }, protocol), Code.PermissionDenied, `${protocol} ctx.system`);
      failed(await asB("iamOwner", "GetInstance", { id: c.id, ctx: { system: true } }, protocol), Code.PermissionDenied, `${protocol} ctx.system get`);
      // Its token is worth nothing on another instance's host, nor is a system member's.
      failed(await at(INSTANCES, protocol, c.domain, port).call("GetInstance", { id: c.id }, b.adminPat), Code.Unauthenticated, `${protocol} B's token on C`);
      failed(
        await at(INSTANCES, protocol, c.domain, port).call("GetInstance", { id: c.id }, server.adminToken),
        Code.Unauthenticated,
        `${protocol} A's system token on C`,
      );
      failed(
        await at(INSTANCES, protocol, "localhost", port).call("GetInstance", { id: b.id }, b.adminPat),
        Code.Unauthenticated,
        `${protocol} B's token on A`,
      );
    }
    // A system member reaches any instance through ctx from its own host.
    const viaCtx = ok(await at(INSTANCES, "grpc", "localhost", port).call("SearchInstances", { ctx: { instanceId: c.id } }, server.adminToken));
    expect(idsOf(viaCtx)).toEqual(expect.arrayContaining([server.instanceId, b.id, c.id]));
    ok(await at(INSTANCES, "rest", "localhost", port).call("GetInstance", { id: c.id, ctx: { system: true } }, server.adminToken));
  });

  it("an IAM_OWNER of the first instance who is not a system member sees only the first instance", async () => {
    const owner = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token;
    const onA = at(INSTANCES, "grpc", "localhost", port);
    ok(await onA.call("GetInstance", { id: server.instanceId }, owner));
    const r: CallResult = await onA.call("GetInstance", { id: b.id }, owner);
    failed(r, Code.NotFound);
    const found = ok(await onA.call("SearchInstances", {}, owner));
    expect(idsOf(found)).toEqual([server.instanceId]);
    expect(totalOf(found)).toBe(1);
    failed(await onA.call("Limit", { id: server.instanceId, limits: { block: true } }, owner), Code.PermissionDenied);
    failed(await onA.call("DeleteInstance", { id: b.id }, owner), Code.PermissionDenied);
    failed(await onA.call("GetInstance", { id: b.id, ctx: { system: true } }, owner), Code.PermissionDenied);
  });
});
