import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { listDetails, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { clients, createMachineUser, createOrg, createProject, orgOwner, sleep, type Clients } from "./helpers.js";

/** SearchUserGrants: filters, sorting, paging and the organization context. */
describe.each(DATABASE_KINDS)("searching user grants (%s)", (kind) => {
  let server: TestServer;
  let c: Clients;
  let orgA: string;
  let orgB: string;
  let pA1: string;
  let pA2: string;
  let pB: string;
  let uA: string;
  let uB: string;
  let uD: string;
  /** Grant ids by name, in creation order g1..g7. */
  const g: Record<string, string> = {};
  const names = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => Object.keys(g).find((k) => g[k] === r.details.id) ?? r.details.id);
  const search = (req: JsonObject, client: Clients = c) => client.grants.ok("SearchUserGrants", req);
  const asc = { query: { asc: true } };

  beforeAll(async () => {
    server = await startTestServer(kind);
    c = clients(server.baseUrl, server.adminToken);
    orgA = await createOrg(c);
    orgB = await createOrg(c);
    pA1 = await createProject(c, orgA, ["admin", "viewer", "Admin", "admin2"]);
    pA2 = await createProject(c, orgA, ["admin"]);
    pB = await createProject(c, orgB, ["admin", "viewer"]);
    uA = await createMachineUser(c, orgA);
    uB = await createMachineUser(c, orgB);
    uD = await createMachineUser(c, server.defaultOrgId);
    const make: [string, string, string, string[]][] = [
      ["g1", pA1, uA, ["viewer", "admin"]],
      ["g2", pA1, uB, ["viewer"]],
      ["g3", pA2, uA, ["admin"]],
      ["g4", pB, uA, ["viewer"]],
      ["g5", pB, uD, ["admin"]],
      ["g6", pA1, uD, ["Admin", "admin2"]],
      ["g7", pA2, uB, []],
    ];
    for (const [name, projectId, userId, roleKeys] of make) {
      g[name] = (await c.grants.ok("CreateUserGrant", { projectId, grant: { userId, roleKeys } })).details.id;
      // Distinct creation times, so the creation order has no ties.
      await sleep(5);
    }
  });
  afterAll(() => server?.close());

  it("lists every grant, newest first by default, with their full representation", async () => {
    const all = await search({});
    expect(names(all)).toEqual(["g7", "g6", "g5", "g4", "g3", "g2", "g1"]);
    expect(listDetails(all)).toMatchObject({ appliedLimit: 100, endOfList: true, totalResult: 7 });
    const got = await c.grants.ok("GetUserGrant", { id: g.g1! });
    expect(all.result[6]).toEqual(got.grant);
    expect(all.result[6]).toEqual({
      details: { id: g.g1, sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) },
      projectId: pA1,
      grant: { userId: uA, roleKeys: ["admin", "viewer"] },
      userOrgId: orgA,
    });
    expect(all.result[0]).toEqual({
      details: { id: g.g7, sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) },
      projectId: pA2,
      grant: { userId: uB },
      userOrgId: orgB,
    });
    expect(names(await search({ ...asc, sortingColumn: "USER_GRANT_FIELD_NAME_CREATION_DATE" }))).toEqual(["g1", "g2", "g3", "g4", "g5", "g6", "g7"]);
    expect((await search({ sortingColumn: "USER_GRANT_FIELD_NAME_CREATION_DATE" })).sortingColumn).toBe("USER_GRANT_FIELD_NAME_CREATION_DATE");
    expect(names(await search(asc))).toEqual(["g1", "g2", "g3", "g4", "g5", "g6", "g7"]);
  });

  it("filters by user, project and exact role key, all of them at once", async () => {
    expect(names(await search({ ...asc, filters: [{ userId: { userId: uA } }] }))).toEqual(["g1", "g3", "g4"]);
    expect(names(await search({ ...asc, filters: [{ userId: { userId: uD } }] }))).toEqual(["g5", "g6"]);
    expect(names(await search({ ...asc, filters: [{ projectId: { projectId: pA1 } }] }))).toEqual(["g1", "g2", "g6"]);
    expect(names(await search({ ...asc, filters: [{ projectId: { projectId: pA2 } }] }))).toEqual(["g3", "g7"]);
    expect(names(await search({ ...asc, filters: [{ roleKey: { roleKey: "admin" } }] }))).toEqual(["g1", "g3", "g5"]);
    expect(names(await search({ ...asc, filters: [{ roleKey: { roleKey: "Admin" } }] }))).toEqual(["g6"]);
    expect(names(await search({ ...asc, filters: [{ roleKey: { roleKey: "viewer" } }] }))).toEqual(["g1", "g2", "g4"]);
    // Exact: no prefixes, no substrings, no case folding.
    for (const roleKey of ["adm", "dmin", "ADMIN", "admin ", "view", "%", "admin%"]) {
      expect(names(await search({ filters: [{ roleKey: { roleKey } }] })), roleKey).toEqual([]);
    }
    expect(names(await search({ ...asc, filters: [{ userId: { userId: uA } }, { roleKey: { roleKey: "admin" } }] }))).toEqual(["g1", "g3"]);
    expect(
      names(await search({ ...asc, filters: [{ userId: { userId: uA } }, { projectId: { projectId: pA1 } }, { roleKey: { roleKey: "viewer" } }] })),
    ).toEqual(["g1"]);
    expect(names(await search({ filters: [{ userId: { userId: uB } }, { roleKey: { roleKey: "admin" } }] }))).toEqual([]);
    // The same filter twice is the same filter; two different users match nothing.
    expect(names(await search({ ...asc, filters: [{ projectId: { projectId: pB } }, { projectId: { projectId: pB } }] }))).toEqual(["g4", "g5"]);
    expect(names(await search({ filters: [{ userId: { userId: uA } }, { userId: { userId: uB } }] }))).toEqual([]);
    expect(names(await search({ filters: [{ userId: { userId: "no-such-user" } }] }))).toEqual([]);
    const none = await search({ filters: [{ projectId: { projectId: "no-such-project" } }] });
    expect(listDetails(none)).toMatchObject({ totalResult: 0, endOfList: true });
  });

  it("pages through the results with totals", async () => {
    const first = await search({ query: { asc: true, limit: 3 } });
    expect(names(first)).toEqual(["g1", "g2", "g3"]);
    expect(listDetails(first)).toMatchObject({ appliedLimit: 3, endOfList: false, totalResult: 7 });
    const second = await search({ query: { asc: true, limit: 3, offset: 3 } });
    expect(names(second)).toEqual(["g4", "g5", "g6"]);
    expect(listDetails(second)).toMatchObject({ appliedLimit: 3, endOfList: false, totalResult: 7 });
    const last = await search({ query: { asc: true, limit: 3, offset: 6 } });
    expect(names(last)).toEqual(["g7"]);
    expect(listDetails(last)).toMatchObject({ appliedLimit: 3, endOfList: true, totalResult: 7 });
    const beyond = await search({ query: { asc: true, limit: 3, offset: 10 } });
    expect(names(beyond)).toEqual([]);
    expect(listDetails(beyond)).toMatchObject({ endOfList: true, totalResult: 7 });
    const descending = await search({ query: { limit: 2, offset: 1 } });
    expect(names(descending)).toEqual(["g6", "g5"]);
    const filtered = await search({ query: { asc: true, limit: 1, offset: 1 }, filters: [{ userId: { userId: uA } }] });
    expect(names(filtered)).toEqual(["g3"]);
    expect(listDetails(filtered)).toMatchObject({ appliedLimit: 1, endOfList: false, totalResult: 3 });
    expect(listDetails(await search({ query: { limit: 1000 } }))).toMatchObject({ appliedLimit: 1000, totalResult: 7 });
  });

  it("refuses limits above 1000, more than 200 filters, empty filters and unknown sort columns", async () => {
    expect(await c.grants.call("SearchUserGrants", { query: { limit: 1001 } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    const many = Array.from({ length: 201 }, () => ({ userId: { userId: uA } }));
    expect(await c.grants.call("SearchUserGrants", { filters: many })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("SearchUserGrants", { filters: [{}] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("SearchUserGrants", { filters: [{ roleKey: { roleKey: "" } }] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("SearchUserGrants", { filters: [{ userId: { userId: "" } }] })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("SearchUserGrants", { sortingColumn: 7 })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("SearchUserGrants", { filters: Array.from({ length: 200 }, () => ({ userId: { userId: uA } })) })).toMatchObject({ ok: true });
  });

  it("restricts to the grants of an organization context: the project's organization, not the user's", async () => {
    expect(names(await search({ ...asc, ctx: { orgId: orgA } }))).toEqual(["g1", "g2", "g3", "g6", "g7"]);
    expect(names(await search({ ...asc, ctx: { orgId: orgB } }))).toEqual(["g4", "g5"]);
    // uD's grants are on other organizations' projects.
    expect(names(await search({ ctx: { orgId: server.defaultOrgId } }))).toEqual([]);
    expect(names(await search({ ctx: { orgId: orgB }, filters: [{ userId: { userId: uB } }] }))).toEqual([]);
    expect(names(await search({ ...asc, ctx: { orgId: orgA }, filters: [{ userId: { userId: uB } }] }))).toEqual(["g2", "g7"]);
    const paged = await search({ ctx: { orgId: orgA }, query: { asc: true, limit: 2 } });
    expect(names(paged)).toEqual(["g1", "g2"]);
    expect(listDetails(paged)).toMatchObject({ totalResult: 5, endOfList: false });
    // An instance context is every organization.
    expect(names(await search({ ...asc, ctx: { instanceId: server.instanceId } }))).toEqual(["g1", "g2", "g3", "g4", "g5", "g6", "g7"]);
    expect(await c.grants.call("SearchUserGrants", { ctx: { orgId: "no-such-org" } })).toMatchObject({ ok: false, code: Code.NotFound });
  });

  it("sorts by change date, and role removals and patches count as changes", async () => {
    // Serialized on a fresh project so the change dates are distinct.
    const projectId = await createProject(c, orgB, ["x", "y"]);
    const ids: Record<string, string> = {};
    for (const name of ["c1", "c2", "c3"]) {
      ids[name] = (await c.grants.ok("CreateUserGrant", { projectId, grant: { userId: await createMachineUser(c, orgA), roleKeys: ["x"] } })).details.id;
      await sleep(5);
    }
    const byChange = async () => {
      const m = await search({ sortingColumn: "USER_GRANT_FIELD_NAME_CHANGE_DATE", query: { asc: true }, filters: [{ projectId: { projectId } }] });
      expect(m.sortingColumn).toBe("USER_GRANT_FIELD_NAME_CHANGE_DATE");
      return (m.result ?? []).map((r: Msg) => Object.keys(ids).find((k) => ids[k] === r.details.id));
    };
    expect(await byChange()).toEqual(["c1", "c2", "c3"]);
    await c.grants.ok("PatchUserGrant", { id: ids.c1!, grant: { roleKeys: ["x", "y"] } });
    await sleep(5);
    expect(await byChange()).toEqual(["c2", "c3", "c1"]);
    // No change: the order stays.
    await c.grants.ok("PatchUserGrant", { id: ids.c2!, grant: { roleKeys: ["x"] } });
    expect(await byChange()).toEqual(["c2", "c3", "c1"]);
    await c.grants.ok("PatchUserGrant", { id: ids.c3!, grant: { roleKeys: ["y"] } });
    await sleep(5);
    expect(await byChange()).toEqual(["c2", "c1", "c3"]);
    // Removing x changes c1 and c2 (which have it), not c3.
    await c.projects.ok("RemoveProjectRole", { projectId, key: "x" });
    const after = await byChange();
    expect(after[0]).toBe("c3");
    expect(after.slice(1).sort()).toEqual(["c1", "c2"]);
    const creation = await search({ query: { asc: true }, filters: [{ projectId: { projectId } }] });
    expect(creation.result.map((r: Msg) => r.details.id)).toEqual([ids.c1, ids.c2, ids.c3]);
    expect(creation.result.map((r: Msg) => r.grant.roleKeys ?? [])).toEqual([["y"], [], ["y"]]);
    expect(creation.result.map((r: Msg) => r.details.sequence)).toEqual(["3", "2", "2"]);
  });
});
