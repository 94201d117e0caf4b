import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { listDetails, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, INACTIVE, createOrg, createProject, orgOwner, projectClient, role, type Client } from "./helpers.js";

/** SearchProjects and SearchProjectRoles: filters, sorting, paging and what each caller sees. */
describe.each(DATABASE_KINDS)("searching projects and roles (%s)", (kind) => {
  let server: TestServer;
  let projects: Client;
  let orgA: string;
  let orgB: string;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  /** Project ids by name. */
  const ids: Record<string, string> = {};
  /** Names in creation order. */
  const created: string[] = [];
  let roleProject: string;

  const names = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.project.name);
  const search = (req: JsonObject, token?: string) => projects.ok("SearchProjects", req, token);
  const byName = { sortingColumn: "PROJECT_FIELD_NAME_NAME", query: { asc: true } };
  // Byte-wise order of every name.
  const ALL = ["Alpha", "Charlie_1", "Echo", "alpha two", "bravo", "delta%x", "foxtrot"];

  beforeAll(async () => {
    server = await startTestServer(kind);
    projects = projectClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "Search Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "Search Org B");
    other = await server.createInstance("127.0.0.1");
    const plan: [string, JsonObject | undefined][] = [
      ["bravo", { orgId: orgA }],
      ["Alpha", { orgId: orgA }],
      ["Echo", { orgId: orgB }],
      ["Charlie_1", { orgId: orgA }],
      ["foxtrot", undefined],
      ["delta%x", { orgId: orgA }],
      ["alpha two", { orgId: orgB }],
    ];
    for (const [name, ctx] of plan) {
      ids[name] = await createProject(projects, name, ctx);
      created.push(name);
      // Distinct creation times, so that the creation order has no ties.
      await new Promise((r) => setTimeout(r, 5));
    }
    await projects.ok("DeactivateProject", { id: ids.bravo! });
    await projects.ok("DeactivateProject", { id: ids.Echo! });
    // The last change: Alpha.
    await new Promise((r) => setTimeout(r, 5));
    await projects.ok("PatchProject", { id: ids.Alpha!, project: { projectRoleCheck: true } });
    await createProject(projectClient(other.baseUrl, other.adminToken), "Alpha");

    roleProject = await createProject(projects, "Role Holder", { orgId: orgB });
    for (const r of [role("a-key", "Zeta", "g2"), role("B-key", "alpha"), role("c_key", "Alpha", "g1"), role("d%key", "beta", "g1")]) {
      await projects.ok("AddProjectRole", { projectId: roleProject, role: r });
    }
  });
  afterAll(() => server?.close());

  /** Without the role holder, which exists for the role searches, and the console's project, which every instance has in its default organization. */
  const ours = (m: Msg) => names(m).filter((n) => n !== "Role Holder" && n !== "Platform");

  describe("SearchProjects", () => {
    it("returns full rows with list details; the default order is creation date, descending", async () => {
      const m = await search({ filters: [{ inIds: { ids: Object.values(ids) } }] });
      expect(names(m)).toEqual([...created].reverse());
      expect(listDetails(m)).toMatchObject({ totalResult: 7, endOfList: true, appliedLimit: 100 });
      expect(listDetails(m).processedSequence > 0n).toBe(true);
      expect(m.sortingColumn).toBeUndefined();
      const alpha = m.result.find((r: Msg) => r.project.name === "Alpha");
      expect(alpha).toEqual({
        details: { id: ids.Alpha, sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) },
        project: { name: "Alpha", projectRoleCheck: true },
        state: ACTIVE,
      });
      expect(m.result.find((r: Msg) => r.project.name === "Echo")).toEqual({
        details: { id: ids.Echo, sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) },
        project: { name: "Echo" },
        state: INACTIVE,
      });
      expect(m.result.find((r: Msg) => r.project.name === "foxtrot").details.resourceOwner).toEqual(orgOwner(server.defaultOrgId));
    });

    it("filters by name with every text method; LIKE wildcards are plain characters", async () => {
      const cases: [string, string, string[]][] = [
        ["TEXT_FILTER_METHOD_EQUALS", "Alpha", ["Alpha"]],
        ["TEXT_FILTER_METHOD_EQUALS", "alpha", []],
        ["TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE", "ALPHA", ["Alpha"]],
        ["TEXT_FILTER_METHOD_STARTS_WITH", "alpha", ["alpha two"]],
        ["TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE", "ALP", ["Alpha", "alpha two"]],
        ["TEXT_FILTER_METHOD_CONTAINS", "_", ["Charlie_1"]],
        ["TEXT_FILTER_METHOD_CONTAINS", "%", ["delta%x"]],
        ["TEXT_FILTER_METHOD_CONTAINS", "o", ["Echo", "alpha two", "bravo", "foxtrot"]],
        ["TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE", "HO", ["Echo"]],
        ["TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE", "A", ["Alpha", "Charlie_1", "alpha two", "bravo", "delta%x"]],
        ["TEXT_FILTER_METHOD_ENDS_WITH", "o", ["Echo", "alpha two", "bravo"]],
        ["TEXT_FILTER_METHOD_ENDS_WITH", "O", []],
        ["TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE", "TWO", ["alpha two"]],
      ];
      for (const [method, name, expected] of cases) {
        const m = await search({ filters: [{ name: { name, method } }, { inIds: { ids: Object.values(ids) } }], ...byName });
        expect(ours(m), `${method} ${name}`).toEqual(expected);
        expect(listDetails(m).totalResult, `${method} ${name}`).toBe(expected.length);
      }
      // The method defaults to equality.
      expect(ours(await search({ filters: [{ name: { name: "Echo" } }] }))).toEqual(["Echo"]);
    });

    it("filters by ids and state, combining every filter with AND", async () => {
      expect(ours(await search({ filters: [{ inIds: { ids: [ids.Alpha!, ids.Echo!, "no-such-project"] } }], ...byName }))).toEqual(["Alpha", "Echo"]);
      expect(ours(await search({ filters: [{ state: { state: INACTIVE } }], ...byName }))).toEqual(["Echo", "bravo"]);
      expect(ours(await search({ filters: [{ state: { state: ACTIVE } }], ...byName }))).toEqual(["Alpha", "Charlie_1", "alpha two", "delta%x", "foxtrot"]);
      expect(ours(await search({ filters: [{ inIds: { ids: [ids.Alpha!, ids.Echo!] } }, { state: { state: ACTIVE } }] }))).toEqual(["Alpha"]);
      expect(
        ours(
          await search({ filters: [{ state: { state: ACTIVE } }, { name: { name: "a", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }], ...byName }),
        ),
      ).toEqual(["Alpha", "alpha two"]);
      expect(ours(await search({ filters: [{ inIds: { ids: [] } }] }))).toEqual([]);
      expect(ours(await search({ filters: [{ inIds: { ids: ["no-such-project"] } }] }))).toEqual([]);
    });

    it("refuses invalid filters and limits", async () => {
      for (const req of [
        { query: { limit: 1001 } },
        { filters: [{}] },
        { filters: [{ state: {} }] },
        { filters: [{ state: { state: 7 } }] },
        { filters: [{ inIds: { ids: [""] } }] },
        { filters: [{ name: { name: "x".repeat(201) } }] },
        { sortingColumn: 9 },
      ] as JsonObject[]) {
        expect(await projects.call("SearchProjects", req), JSON.stringify(req)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
      expect(listDetails(await search({ query: { limit: 1000 } })).appliedLimit).toBe(1000);
    });

    it("sorts by every column both ways", async () => {
      const filters = [{ inIds: { ids: Object.values(ids) } }];
      const sorted = async (sortingColumn: string, asc: boolean) => {
        const m = await search({ filters, sortingColumn, query: { asc } });
        expect(m.sortingColumn).toBe(sortingColumn);
        return names(m);
      };
      expect(await sorted("PROJECT_FIELD_NAME_NAME", true)).toEqual(ALL);
      expect(await sorted("PROJECT_FIELD_NAME_NAME", false)).toEqual([...ALL].reverse());
      expect(await sorted("PROJECT_FIELD_NAME_CREATION_DATE", true)).toEqual(created);
      expect(await sorted("PROJECT_FIELD_NAME_CREATION_DATE", false)).toEqual([...created].reverse());
      const byId = [...created].sort((a, b) => (ids[a]! < ids[b]! ? -1 : 1));
      expect(await sorted("PROJECT_FIELD_NAME_ID", true)).toEqual(byId);
      expect(await sorted("PROJECT_FIELD_NAME_ID", false)).toEqual([...byId].reverse());
      // Changed after creation: bravo, Echo, then Alpha last.
      const byChange = [...created.filter((n) => !["bravo", "Echo", "Alpha"].includes(n)), "bravo", "Echo", "Alpha"];
      expect(await sorted("PROJECT_FIELD_NAME_CHANGE_DATE", true)).toEqual(byChange);
      expect(await sorted("PROJECT_FIELD_NAME_CHANGE_DATE", false)).toEqual([...byChange].reverse());
      // Unspecified: creation date; echoed as unspecified.
      const m = await search({ filters, query: { asc: true } });
      expect(names(m)).toEqual(created);
      expect(m.sortingColumn).toBeUndefined();
    });

    it("pages with offset and limit, with the total of all matches", async () => {
      const filters = [{ inIds: { ids: Object.values(ids) } }];
      const pages: string[][] = [];
      for (let offset = 0; offset < 7; offset += 3) {
        const m = await search({ filters, ...byName, query: { asc: true, offset: String(offset), limit: 3 } });
        expect(listDetails(m), `offset ${offset}`).toMatchObject({ totalResult: 7, appliedLimit: 3, endOfList: offset + 3 >= 7 });
        pages.push(names(m));
      }
      expect(pages).toEqual([ALL.slice(0, 3), ALL.slice(3, 6), ALL.slice(6)]);
      const past = await search({ filters, ...byName, query: { asc: true, offset: "50", limit: 3 } });
      expect(names(past)).toEqual([]);
      expect(listDetails(past)).toMatchObject({ totalResult: 7, endOfList: true, appliedLimit: 3 });
      const exact = await search({ filters, ...byName, query: { asc: true, offset: "4", limit: 3 } });
      expect(names(exact)).toEqual(ALL.slice(4, 7));
      expect(listDetails(exact).endOfList).toBe(true);
    });

    it("restricts to the organization of an org ctx; an instance ctx or none means every organization", async () => {
      expect(ours(await search({ ctx: { orgId: orgA }, ...byName }))).toEqual(["Alpha", "Charlie_1", "bravo", "delta%x"]);
      expect(names(await search({ ctx: { orgDomain: "search-org-b.localhost" }, ...byName }))).toEqual(["Echo", "Role Holder", "alpha two"]);
      expect(names(await search({ ctx: { orgId: server.defaultOrgId }, ...byName }))).toEqual(["Platform", "foxtrot"]);
      expect(ours(await search({ ctx: { instanceId: server.instanceId }, ...byName }))).toEqual(ALL);
      expect(ours(await search(byName))).toEqual(ALL);
      expect(ours(await search({ ctx: { orgId: orgA }, filters: [{ inIds: { ids: [ids.Echo!, ids.Alpha!] } }] }))).toEqual(["Alpha"]);
      expect(await projects.call("SearchProjects", { ctx: { orgId: "no-such-org" } })).toMatchObject({ ok: false, code: Code.NotFound });
    });

    it("shows each caller only the organizations it may read", async () => {
      const ownerA = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
      const viewerB = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER_VIEWER"] }] });
      const both = await server.createUser({
        roles: [
          { context: "org", contextId: orgA, roles: ["ORG_OWNER"] },
          { context: "org", contextId: orgB, roles: ["ORG_OWNER_VIEWER"] },
        ],
      });
      const instViewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
      const plain = await server.createUser({});

      expect(ours(await search(byName, ownerA.token))).toEqual(["Alpha", "Charlie_1", "bravo", "delta%x"]);
      expect(listDetails(await search(byName, ownerA.token)).totalResult).toBe(4);
      expect(ours(await search({ ctx: { orgId: orgA }, ...byName }, ownerA.token))).toEqual(["Alpha", "Charlie_1", "bravo", "delta%x"]);
      expect(names(await search(byName, viewerB.token))).toEqual(["Echo", "Role Holder", "alpha two"]);
      expect(ours(await search(byName, both.token))).toEqual(["Alpha", "Charlie_1", "Echo", "alpha two", "bravo", "delta%x"]);
      expect(ours(await search(byName, instViewer.token))).toEqual(ALL);
      // Filters cannot reach past what the caller may read.
      expect(ours(await search({ filters: [{ inIds: { ids: [ids.Echo!, ids.foxtrot!, ids.Alpha!] } }] }, ownerA.token))).toEqual(["Alpha"]);
      // Another organization's ctx, or no permission anywhere: PermissionDenied.
      expect(await projects.call("SearchProjects", { ctx: { orgId: orgB } }, ownerA.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await projects.call("SearchProjects", {}, plain.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect(await projects.call("SearchProjects", { ctx: { orgId: orgA } }, plain.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    });

    it("never shows another instance's projects", async () => {
      const theirs = projectClient(other.baseUrl, other.adminToken);
      const m = await theirs.ok("SearchProjects", byName);
      expect(names(m)).toEqual(["Alpha", "Platform"]);
      expect(m.result[0].details.resourceOwner).toEqual(orgOwner(other.orgId));
      expect(names(await theirs.ok("SearchProjects", { filters: [{ inIds: { ids: Object.values(ids) } }] }))).toEqual([]);
      expect(ours(await search({ filters: [{ name: { name: "Alpha" } }] }))).toEqual(["Alpha"]);
      expect((await search({ filters: [{ name: { name: "Alpha" } }] })).result[0].details.id).toBe(ids.Alpha);
    });
  });

  describe("list details", () => {
    it("report the newest project event of the instance as processed sequence and timestamp", async () => {
      const theirs = projectClient(other.baseUrl, other.adminToken);
      const id = await createProject(theirs, "Details Probe");
      const before = listDetails(await theirs.ok("SearchProjects", {}));
      const patched = await theirs.ok("PatchProject", { id, project: { name: "Details Probe 2" } });
      const after = listDetails(await theirs.ok("SearchProjects", {}));
      expect(after.processedSequence > before.processedSequence).toBe(true);
      expect(after.timestamp).toBe(patched.details.changeDate);
      await theirs.ok("AddProjectRole", { projectId: id, role: role("r") });
      const roles = listDetails(await theirs.ok("SearchProjectRoles", { projectId: id }));
      expect(roles.processedSequence > after.processedSequence).toBe(true);
      expect(roles.timestamp).toBe((await theirs.ok("GetProject", { id })).project.details.changeDate);
      // A no-op patch is no event.
      await theirs.ok("PatchProject", { id, project: { name: "Details Probe 2" } });
      expect(listDetails(await theirs.ok("SearchProjects", {})).processedSequence).toBe(roles.processedSequence);
    });
  });

  describe("SearchProjectRoles", () => {
    const keys = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.role.key);
    const roles = (req: JsonObject) => projects.ok("SearchProjectRoles", { projectId: roleProject, ...req });

    it("returns every role with the project's details; default: by key, descending", async () => {
      const m = await roles({});
      expect(keys(m)).toEqual(["d%key", "c_key", "a-key", "B-key"]);
      expect(listDetails(m)).toMatchObject({ totalResult: 4, endOfList: true, appliedLimit: 100 });
      expect(m.sortingColumn).toBeUndefined();
      const details = (key: string) => ({ id: key, sequence: "5", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) });
      expect(m.result).toEqual([
        { details: details("d%key"), role: { key: "d%key", displayName: "beta", group: "g1" } },
        { details: details("c_key"), role: { key: "c_key", displayName: "Alpha", group: "g1" } },
        { details: details("a-key"), role: { key: "a-key", displayName: "Zeta", group: "g2" } },
        { details: details("B-key"), role: { key: "B-key", displayName: "alpha" } },
      ]);
      const project = (await projects.ok("GetProject", { id: roleProject })).project;
      expect(m.result.every((r: Msg) => r.details.changeDate === project.details.changeDate)).toBe(true);
    });

    it("sorts byte-wise by key, display name or group, ties by key in the same direction", async () => {
      const sorted = async (sortingColumn: string, asc: boolean) => {
        const m = await roles({ sortingColumn, query: { asc } });
        expect(m.sortingColumn).toBe(sortingColumn);
        return keys(m);
      };
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_KEY", true)).toEqual(["B-key", "a-key", "c_key", "d%key"]);
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_KEY", false)).toEqual(["d%key", "c_key", "a-key", "B-key"]);
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_DISPLAY_NAME", true)).toEqual(["c_key", "a-key", "B-key", "d%key"]);
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_DISPLAY_NAME", false)).toEqual(["d%key", "B-key", "a-key", "c_key"]);
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_GROUP", true)).toEqual(["B-key", "c_key", "d%key", "a-key"]);
      expect(await sorted("PROJECT_ROLE_FIELD_NAME_GROUP", false)).toEqual(["a-key", "d%key", "c_key", "B-key"]);
      expect(keys(await roles({ query: { asc: true } }))).toEqual(["B-key", "a-key", "c_key", "d%key"]);
    });

    it("filters by key, display name and group with text methods, combined with AND", async () => {
      const asc = { sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY", query: { asc: true } };
      const cases: [JsonObject[], string[]][] = [
        [[{ key: { key: "a-key" } }], ["a-key"]],
        [[{ key: { key: "A-KEY" } }], []],
        [[{ key: { key: "A-KEY", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }], ["a-key"]],
        [[{ key: { key: "c_", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }], ["c_key"]],
        [[{ key: { key: "%", method: "TEXT_FILTER_METHOD_CONTAINS" } }], ["d%key"]],
        [[{ key: { key: "KEY", method: "TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE" } }], ["B-key", "a-key", "c_key", "d%key"]],
        [[{ key: { key: "b", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }], ["B-key"]],
        [[{ displayName: { displayName: "alpha", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }], ["B-key", "c_key"]],
        [[{ displayName: { displayName: "alpha" } }], ["B-key"]],
        [[{ displayName: { displayName: "ET", method: "TEXT_FILTER_METHOD_CONTAINS_IGNORE_CASE" } }], ["a-key", "d%key"]],
        [[{ displayName: { displayName: "a", method: "TEXT_FILTER_METHOD_ENDS_WITH" } }], ["B-key", "a-key", "c_key", "d%key"]],
        [[{ group: { group: "" } }], ["B-key"]],
        [[{ group: { group: "g", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }], ["a-key", "c_key", "d%key"]],
        [[{ group: { group: "g1" } }, { displayName: { displayName: "b", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }], ["d%key"]],
        [
          [{ group: { group: "G1", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }, { key: { key: "c", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
          ["c_key"],
        ],
      ];
      for (const [filters, expected] of cases) {
        const m = await roles({ filters, ...asc });
        expect(keys(m), JSON.stringify(filters)).toEqual(expected);
        expect(listDetails(m).totalResult, JSON.stringify(filters)).toBe(expected.length);
      }
    });

    it("pages roles and refuses invalid requests", async () => {
      const m = await roles({ sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY", query: { asc: true, offset: "1", limit: 2 } });
      expect(keys(m)).toEqual(["a-key", "c_key"]);
      expect(listDetails(m)).toMatchObject({ totalResult: 4, appliedLimit: 2, endOfList: false });
      const last = await roles({ sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY", query: { asc: true, offset: "2", limit: 2 } });
      expect(keys(last)).toEqual(["c_key", "d%key"]);
      expect(listDetails(last).endOfList).toBe(true);
      const past = await roles({ query: { offset: "10" } });
      expect(keys(past)).toEqual([]);
      expect(listDetails(past)).toMatchObject({ totalResult: 4, endOfList: true });
      for (const req of [
        { query: { limit: 1001 } },
        { filters: [{}] },
        { sortingColumn: 8 },
        { filters: [{ key: { key: "x".repeat(201) } }] },
      ] as JsonObject[]) {
        expect(await projects.call("SearchProjectRoles", { projectId: roleProject, ...req }), JSON.stringify(req)).toMatchObject({
          ok: false,
          code: Code.InvalidArgument,
        });
      }
      expect(await projects.call("SearchProjectRoles", { projectId: "" })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      // A project without roles: an empty page.
      const empty = await projects.ok("SearchProjectRoles", { projectId: ids.foxtrot! });
      expect(keys(empty)).toEqual([]);
      expect(listDetails(empty)).toMatchObject({ totalResult: 0, endOfList: true });
    });
  });
});
