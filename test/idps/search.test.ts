import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { listDetails } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVATE, ACTIVE, DEACTIVATE, INACTIVE, INHERIT, createOrg, gitlab, idpClient, instanceOwner, orgOwner, systemOwner, type Idps } from "./helpers.js";

/** SearchIDPs: what each context level covers, filters, sorting and paging (issue 8, §1). */
describe.each(DATABASE_KINDS)("searching identity providers (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  let orgA: string;
  let orgB: string;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  /** Provider ids by name. */
  const ids: Record<string, string> = {};

  const create = async (name: string, ctx?: JsonObject, client?: Idps, type = "GitLab") => {
    const made = await (client ?? idps).ok(`Create${type}IDP`, { idp: gitlab(name), ...(ctx && { ctx }) });
    ids[name] = made.details.id;
    // Distinct creation times, so the default order (creation date) has no ties.
    await new Promise((r) => setTimeout(r, 3));
    return made.details.id as string;
  };
  const names = (m: { result?: { idp: { name: string } }[] }): string[] => (m.result ?? []).map((r) => r.idp.name);
  const search = (req: JsonObject, client: Idps = idps) => client.ok("SearchIDPs", req);
  const byName = { sortingColumn: "IDP_FIELD_NAME_NAME", query: { asc: true } };

  beforeAll(async () => {
    server = await startTestServer(kind);
    idps = idpClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "Search Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "Search Org B");
    other = await server.createInstance("127.0.0.1");
    await create("sierra-system", { system: true });
    await create("india-instance");
    await create("alpha-org", { orgId: orgA });
    await create("delta-MIXED", { instanceId: server.instanceId });
    await create("bravo-org", { orgId: orgB });
    await create("xray-other", undefined, idpClient(other.baseUrl, other.adminToken));
    // Instance switches the system's off for itself; org A switches the instance's off;
    // org B switches the system's on; bravo-org is off in its owner.
    const patch = (name: string, ctx: JsonObject | undefined, statePolicy: string) =>
      idps.ok("PatchGitLabIDP", { id: ids[name]!, ...(ctx && { ctx }), idp: { idp: { statePolicy } } });
    await patch("sierra-system", { instanceId: server.instanceId }, DEACTIVATE);
    await patch("india-instance", { orgId: orgA }, DEACTIVATE);
    await patch("sierra-system", { orgId: orgB }, ACTIVATE);
    await patch("bravo-org", undefined, DEACTIVATE);
  });
  afterAll(() => server?.close());

  describe("scope per context level", () => {
    it("from the system: every provider of every instance", async () => {
      const m = await search({ ctx: { system: true }, ...byName });
      expect(names(m)).toEqual(["alpha-org", "bravo-org", "delta-MIXED", "india-instance", "sierra-system", "xray-other"]);
      expect(listDetails(m)).toMatchObject({ totalResult: 6, endOfList: true, appliedLimit: 100 });
      expect(m.sortingColumn).toBe("IDP_FIELD_NAME_NAME");
    });

    it("from the instance (with and without ctx): the system's, the instance's and every org's", async () => {
      for (const ctx of [undefined, { instanceId: server.instanceId }]) {
        const m = await search({ ...(ctx && { ctx }), ...byName });
        expect(names(m), JSON.stringify(ctx)).toEqual(["alpha-org", "bravo-org", "delta-MIXED", "india-instance", "sierra-system"]);
        expect(listDetails(m).totalResult).toBe(5);
      }
    });

    it("from org A and org B: their own, the instance's and the system's, not the other org's", async () => {
      expect(names(await search({ ctx: { orgId: orgA }, ...byName }))).toEqual(["alpha-org", "delta-MIXED", "india-instance", "sierra-system"]);
      expect(names(await search({ ctx: { orgId: orgB }, ...byName }))).toEqual(["bravo-org", "delta-MIXED", "india-instance", "sierra-system"]);
    });

    it("from another instance: the system's and its own only", async () => {
      const theirs = idpClient(other.baseUrl, other.adminToken);
      expect(names(await search(byName, theirs))).toEqual(["sierra-system", "xray-other"]);
      // Our providers do not exist for that instance's admin.
      for (const name of ["india-instance", "alpha-org"]) {
        expect(await theirs.call("GetIDP", { id: ids[name]! })).toMatchObject({ ok: false, code: Code.NotFound });
      }
    });

    it("shows per result the owner, the parent of the asked context, its own policy and the effective state", async () => {
      const m = await search({ ctx: { orgId: orgA }, ...byName });
      const row = (name: string) => m.result.find((r: { idp: { name: string } }) => r.idp.name === name);
      const details = (name: string, owner: JsonObject) => ({
        id: ids[name],
        sequence: expect.any(String),
        changeDate: expect.any(String),
        resourceOwner: owner,
      });
      const instParent = (state: string) => ({ parent: instanceOwner(server.instanceId), state });
      expect(row("alpha-org")).toEqual({
        details: details("alpha-org", orgOwner(orgA)),
        state: ACTIVE,
        type: "PROVIDER_TYPE_GITLAB",
        idp: { name: "alpha-org", statePolicy: INHERIT, options: {} },
      });
      expect(row("india-instance")).toEqual({
        details: details("india-instance", instanceOwner(server.instanceId)),
        parent: instParent(ACTIVE),
        state: INACTIVE,
        type: "PROVIDER_TYPE_GITLAB",
        idp: { name: "india-instance", statePolicy: DEACTIVATE, options: {} },
      });
      expect(row("sierra-system")).toEqual({
        details: details("sierra-system", systemOwner),
        parent: instParent(INACTIVE),
        state: INACTIVE,
        type: "PROVIDER_TYPE_GITLAB",
        idp: { name: "sierra-system", statePolicy: INHERIT, options: {} },
      });
      // Only type-agnostic properties: never a configuration.
      for (const r of m.result) {
        expect(Object.keys(r).sort()).toEqual(expect.arrayContaining(["details", "idp", "state", "type"]));
        expect(Object.keys(r).every((k) => ["details", "parent", "state", "type", "idp"].includes(k))).toBe(true);
        expect(Object.keys(r.idp).every((k) => ["name", "statePolicy", "options"].includes(k))).toBe(true);
      }
    });
  });

  describe("filters", () => {
    it("by id, from every context that sees it", async () => {
      const id = ids["india-instance"]!;
      for (const ctx of [undefined, { orgId: orgA }, { orgId: orgB }, { system: true }] as (JsonObject | undefined)[]) {
        expect(names(await search({ ...(ctx && { ctx }), filters: [{ id: { id } }] })), JSON.stringify(ctx)).toEqual(["india-instance"]);
      }
      expect(names(await search({ ctx: { orgId: orgB }, filters: [{ id: { id: ids["alpha-org"]! } }] }))).toEqual([]);
      expect(names(await search({ filters: [{ id: { id: "no-such-idp" } }] }))).toEqual([]);
    });

    it("by name with every text method", async () => {
      const cases: [string, string, string[]][] = [
        ["TEXT_FILTER_METHOD_EQUALS", "delta-MIXED", ["delta-MIXED"]],
        ["TEXT_FILTER_METHOD_EQUALS", "delta-mixed", []],
        ["TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE", "DELTA-mixed", ["delta-MIXED"]],
        ["TEXT_FILTER_METHOD_STARTS_WITH", "b", ["bravo-org"]],
        ["TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE", "DEL", ["delta-MIXED"]],
        ["TEXT_FILTER_METHOD_CONTAINS", "-org", ["alpha-org", "bravo-org"]],
        ["TEXT_FILTER_METHOD_CONTAINS", "MIX", ["delta-MIXED"]],
        ["TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE", "ORG", ["alpha-org", "bravo-org"]],
        ["TEXT_FILTER_METHOD_ENDS_WITH", "instance", ["india-instance"]],
        ["TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE", "MIXED", ["delta-MIXED"]],
        ["TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE", "SYSTEM", ["sierra-system"]],
      ];
      for (const [method, name, expected] of cases) {
        expect(names(await search({ ...byName, filters: [{ name: { name, method } }] })), `${method} ${name}`).toEqual(expected);
      }
      // Wildcards are literal.
      expect(names(await search({ filters: [{ name: { name: "%", method: "TEXT_FILTER_METHOD_CONTAINS" } }] }))).toEqual([]);
      expect(names(await search({ filters: [{ name: { name: "_", method: "TEXT_FILTER_METHOD_CONTAINS" } }] }))).toEqual([]);
      // Combined with AND.
      expect(
        names(
          await search({
            filters: [{ name: { name: "org", method: "TEXT_FILTER_METHOD_CONTAINS" } }, { name: { name: "a", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
          }),
        ),
      ).toEqual(["alpha-org"]);
    });

    it("by state, evaluated in the asked context", async () => {
      const st = async (ctx: JsonObject | undefined, state: string) => names(await search({ ...(ctx && { ctx }), ...byName, filters: [{ state: { state } }] }));
      expect(await st({ system: true }, ACTIVE)).toEqual(["alpha-org", "delta-MIXED", "india-instance", "sierra-system", "xray-other"]);
      expect(await st({ system: true }, INACTIVE)).toEqual(["bravo-org"]);
      expect(await st(undefined, ACTIVE)).toEqual(["alpha-org", "delta-MIXED", "india-instance"]);
      expect(await st(undefined, INACTIVE)).toEqual(["bravo-org", "sierra-system"]);
      expect(await st({ orgId: orgA }, ACTIVE)).toEqual(["alpha-org", "delta-MIXED"]);
      expect(await st({ orgId: orgA }, INACTIVE)).toEqual(["india-instance", "sierra-system"]);
      expect(await st({ orgId: orgB }, ACTIVE)).toEqual(["delta-MIXED", "india-instance", "sierra-system"]);
      expect(await st({ orgId: orgB }, INACTIVE)).toEqual(["bravo-org"]);
      expect(await idps.call("SearchIDPs", { filters: [{ state: { state: "EFFECTIVE_STATE_UNSPECIFIED" } }] })).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
      });
    });

    it("the state filter agrees with each result's state", async () => {
      for (const ctx of [undefined, { orgId: orgA }, { orgId: orgB }, { system: true }] as (JsonObject | undefined)[]) {
        const all = await search({ ...(ctx && { ctx }), ...byName });
        const active = names(await search({ ...(ctx && { ctx }), ...byName, filters: [{ state: { state: ACTIVE } }] }));
        expect(active, JSON.stringify(ctx)).toEqual(
          all.result.filter((r: { state: string }) => r.state === ACTIVE).map((r: { idp: { name: string } }) => r.idp.name),
        );
      }
    });
  });

  describe("sorting and paging", () => {
    it("sorts by name ascending and descending, by creation date by default", async () => {
      const asc = ["alpha-org", "bravo-org", "delta-MIXED", "india-instance", "sierra-system"];
      expect(names(await search(byName))).toEqual(asc);
      expect(names(await search({ sortingColumn: "IDP_FIELD_NAME_NAME" }))).toEqual([...asc].reverse());
      const created = ["sierra-system", "india-instance", "alpha-org", "delta-MIXED", "bravo-org"];
      expect(names(await search({ query: { asc: true } }))).toEqual(created);
      expect(names(await search({}))).toEqual([...created].reverse());
    });

    it("pages with limit and offset, reporting total and end of list", async () => {
      const page = (offset: number) => search({ ...byName, query: { asc: true, limit: 2, offset: String(offset) } });
      const first = await page(0);
      expect(names(first)).toEqual(["alpha-org", "bravo-org"]);
      expect(listDetails(first)).toMatchObject({ appliedLimit: 2, totalResult: 5, endOfList: false });
      const second = await page(2);
      expect(names(second)).toEqual(["delta-MIXED", "india-instance"]);
      expect(listDetails(second)).toMatchObject({ totalResult: 5, endOfList: false });
      const last = await page(4);
      expect(names(last)).toEqual(["sierra-system"]);
      expect(listDetails(last)).toMatchObject({ totalResult: 5, endOfList: true });
      const past = await page(10);
      expect(names(past)).toEqual([]);
      expect(listDetails(past)).toMatchObject({ totalResult: 5, endOfList: true });
    });

    it("applies 1000 at most and refuses a limit above", async () => {
      expect(listDetails(await search({ query: { limit: 1000 } })).appliedLimit).toBe(1000);
      expect(await idps.call("SearchIDPs", { query: { limit: 1001 } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await idpClient(server.baseUrl, server.adminToken, "rest").call("SearchIDPs", { query: { limit: 1001 } })).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        httpStatus: 400,
      });
    });

    it("answers the same over REST, filters as the body", async () => {
      const rest = idpClient(server.baseUrl, server.adminToken, "rest");
      const req = { ctx: { orgId: orgA }, ...byName, filters: [{ name: { name: "i", method: "TEXT_FILTER_METHOD_CONTAINS" } }] };
      const viaRest = await rest.ok("SearchIDPs", req);
      expect(names(viaRest)).toEqual(["india-instance", "sierra-system"]);
      const viaGrpc = await idps.ok("SearchIDPs", req);
      expect({ ...viaRest, details: { ...viaRest.details, timestamp: "*" } }).toEqual({ ...viaGrpc, details: { ...viaGrpc.details, timestamp: "*" } });
    });
  });

  describe("who sees what", () => {
    it("an ORG_OWNER of A sees the instance's, the system's and org A's only", async () => {
      const owner = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
      const asOwner = idpClient(server.baseUrl, owner.token);
      expect(names(await search({ ctx: { orgId: orgA }, ...byName }, asOwner))).toEqual(["alpha-org", "delta-MIXED", "india-instance", "sierra-system"]);
      // Without ctx: the Host's instance, with only the organizations it may read.
      expect(names(await search(byName, asOwner))).toEqual(["alpha-org", "delta-MIXED", "india-instance", "sierra-system"]);
      expect(await asOwner.call("SearchIDPs", { ctx: { orgId: orgB } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await asOwner.call("SearchIDPs", { ctx: { system: true } })).toMatchObject({ ok: false, code: Code.PermissionDenied });
    });

    it("a plain user and another instance's admin find nothing of ours", async () => {
      const plain = await server.createUser({});
      expect(await idpClient(server.baseUrl, plain.token).call("SearchIDPs", {})).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await idpClient(server.baseUrl, plain.token).call("SearchIDPs", { ctx: { orgId: orgA } })).toMatchObject({
        ok: false,
        code: Code.PermissionDenied,
      });
      const theirs = idpClient(other.baseUrl, other.adminToken);
      expect(await theirs.call("SearchIDPs", { ctx: { orgId: orgA } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await theirs.call("SearchIDPs", { ctx: { instanceId: server.instanceId } })).toMatchObject({ ok: false, code: Code.NotFound });
    });
  });
});
