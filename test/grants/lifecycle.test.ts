import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { clients, createGrant, createMachineUser, createOrg, createProject, getGrant, orgOwner, type Clients } from "./helpers.js";

/** PlatformGrants: creating, reading, patching and deleting one user grant. */
describe.each(DATABASE_KINDS)("user grant lifecycle (%s)", (kind) => {
  let server: TestServer;
  let c: Clients;
  let orgA: string;
  let orgB: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    c = clients(server.baseUrl, server.adminToken);
    orgA = await createOrg(c);
    orgB = await createOrg(c);
  });
  afterAll(() => server?.close());

  it("creates a grant owned by the project's organization for a user of another organization", async () => {
    const projectId = await createProject(c, orgA, ["viewer", "admin", "editor"]);
    const userId = await createMachineUser(c, orgB);
    const created = await c.grants.ok("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["viewer", "admin"] } });
    expect(created).toEqual({ details: { id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
    const id = created.details.id;
    expect(await c.grants.ok("GetUserGrant", { id })).toEqual({
      grant: {
        details: { id, sequence: "1", changeDate: created.details.changeDate, resourceOwner: orgOwner(orgA) },
        projectId,
        grant: { userId, roleKeys: ["admin", "viewer"] },
        userOrgId: orgB,
      },
    });
  });

  it("answers 201 over REST and reads the grant of a user of the default organization", async () => {
    const rest = clients(server.baseUrl, server.adminToken, "rest");
    const projectId = await createProject(c, orgB, ["r1"]);
    const userId = await createMachineUser(c, server.defaultOrgId);
    const created = await rest.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["r1"] } });
    expect(created).toMatchObject({ ok: true, httpStatus: 201 });
    const id = okMessage(created).details.id;
    const got = await rest.grants.call("GetUserGrant", { id });
    expect(got).toMatchObject({ ok: true, httpStatus: 200 });
    expect(okMessage(got).grant).toEqual({
      details: { id, sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) },
      projectId,
      grant: { userId, roleKeys: ["r1"] },
      userOrgId: server.defaultOrgId,
    });
  });

  it("accepts an empty list of role keys", async () => {
    const projectId = await createProject(c, orgA, ["a"]);
    const userId = await createMachineUser(c, orgA);
    const id = await createGrant(c, projectId, userId, []);
    expect(await getGrant(c, id)).toEqual({
      details: { id, sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) },
      projectId,
      grant: { userId },
      userOrgId: orgA,
    });
    const omitted = await c.grants.ok("CreateUserGrant", { projectId, grant: { userId: await createMachineUser(c, orgA) } });
    expect((await getGrant(c, omitted.details.id)).grant.roleKeys ?? []).toEqual([]);
  });

  it("refuses unknown projects and users, unknown role keys, a second grant and invalid keys", async () => {
    const projectId = await createProject(c, orgA, ["a", "b"]);
    const userId = await createMachineUser(c, orgA);
    expect(await c.grants.call("CreateUserGrant", { projectId: "no-such-project", grant: { userId, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId: "no-such-user", roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });

    const unknown = await c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a", "zulu", "yankee"] } });
    expect(unknown).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((unknown as { message: string }).message).toContain('"zulu"');
    expect((unknown as { message: string }).message).toContain('"yankee"');
    expect((unknown as { message: string }).message).not.toContain('"a"');
    // Nothing was created by the refused calls.
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ projectId: { projectId } }] })).result ?? []).toEqual([]);

    const first = await createGrant(c, projectId, userId, ["a"]);
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["b"] } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: [] } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect((await getGrant(c, first)).grant.roleKeys).toEqual(["a"]);

    const other = await createMachineUser(c, orgA);
    for (const roleKeys of [["a", "a"], [""], ["x".repeat(201)], Array.from({ length: 201 }, (_, i) => `k${i}`)]) {
      expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId: other, roleKeys } }), JSON.stringify(roleKeys).slice(0, 40)).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
      });
    }
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId: "", roleKeys: [] } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("CreateUserGrant", { projectId: "", grant: { userId: other, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    expect(await c.grants.call("CreateUserGrant", { projectId })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ userId: { userId: other } }] })).result ?? []).toEqual([]);
  });

  it("gives the same user grants on several projects and several users grants on one project", async () => {
    const p1 = await createProject(c, orgA, ["a"]);
    const p2 = await createProject(c, orgB, ["a"]);
    const u1 = await createMachineUser(c, orgA);
    const u2 = await createMachineUser(c, orgB);
    const ids = [
      await createGrant(c, p1, u1, ["a"]),
      await createGrant(c, p2, u1, ["a"]),
      await createGrant(c, p1, u2, ["a"]),
      await createGrant(c, p2, u2, []),
    ];
    expect(new Set(ids).size).toBe(4);
    expect((await getGrant(c, ids[1]!)).details.resourceOwner).toEqual(orgOwner(orgB));
    expect((await getGrant(c, ids[2]!)).userOrgId).toBe(orgB);
  });

  it("patches the role keys: replaces them, keeps the sequence for the same set, refuses unknown keys, empties them", async () => {
    const projectId = await createProject(c, orgA, ["a", "b", "c", "d"]);
    const userId = await createMachineUser(c, orgB);
    const id = await createGrant(c, projectId, userId, ["a", "b"]);

    const patched = await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: ["d", "c"] } });
    expect(patched).toEqual({ details: { id, sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
    const afterPatch = await getGrant(c, id);
    expect(afterPatch).toEqual({
      details: { id, sequence: "2", changeDate: patched.details.changeDate, resourceOwner: orgOwner(orgA) },
      projectId,
      grant: { userId, roleKeys: ["c", "d"] },
      userOrgId: orgB,
    });

    // The same set in another order is no change.
    const same = await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: ["c", "d"] } });
    expect(same).toEqual(patched);
    expect(await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: ["d", "c"] } })).toEqual(patched);
    expect(await getGrant(c, id)).toEqual(afterPatch);

    // An unknown key refuses the whole patch.
    const refused = await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["a", "nope"] } });
    expect(refused).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((refused as { message: string }).message).toContain('"nope"');
    expect(await getGrant(c, id)).toEqual(afterPatch);
    expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["a", "a"] } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: [""] } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await c.grants.call("PatchUserGrant", { id })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await getGrant(c, id)).toEqual(afterPatch);

    const emptied = await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: [] } });
    expect(emptied.details).toMatchObject({ id, sequence: "3" });
    expect(await getGrant(c, id)).toEqual({
      details: { id, sequence: "3", changeDate: emptied.details.changeDate, resourceOwner: orgOwner(orgA) },
      projectId,
      grant: { userId },
      userOrgId: orgB,
    });
    // Empty again: nothing changes.
    expect(await c.grants.ok("PatchUserGrant", { id, grant: {} })).toEqual(emptied);
    const refilled = await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: ["b", "a", "d", "c"] } });
    expect(refilled.details.sequence).toBe("4");
    expect((await getGrant(c, id)).grant.roleKeys).toEqual(["a", "b", "c", "d"]);
    expect(await c.grants.call("PatchUserGrant", { id: "no-such-grant", grant: { roleKeys: [] } })).toMatchObject({ ok: false, code: Code.NotFound });
  });

  it("keeps role keys with quotes, backslashes, wildcards and non-ASCII characters exactly", async () => {
    const keys = ['a"b', "x\\y", "%", "_", "ü", "Ü", "[x]", '{"k":1}', "a,b", "k".repeat(200)];
    const projectId = await createProject(c, orgA, keys);
    const userId = await createMachineUser(c, orgB);
    const id = await createGrant(c, projectId, userId, [...keys].reverse());
    expect((await getGrant(c, id)).grant.roleKeys).toEqual([...keys].sort());
    for (const key of keys) {
      const found = await c.grants.ok("SearchUserGrants", { filters: [{ roleKey: { roleKey: key } }, { projectId: { projectId } }] });
      expect(
        found.result.map((r: { details: { id: string } }) => r.details.id),
        key,
      ).toEqual([id]);
    }
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ roleKey: { roleKey: "u" } }, { projectId: { projectId } }] })).result ?? []).toEqual([]);
    await c.projects.ok("RemoveProjectRole", { projectId, key: 'a"b' });
    await c.projects.ok("RemoveProjectRole", { projectId, key: "%" });
    const after = await getGrant(c, id);
    expect(after.details.sequence).toBe("3");
    expect(after.grant.roleKeys).toEqual(keys.filter((k) => k !== 'a"b' && k !== "%").sort());
    expect((await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: ["ü"] } })).details.sequence).toBe("4");
    expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["u"] } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: Array.from({ length: 201 }, (_, i) => `k${i}`) } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    expect((await getGrant(c, id)).grant.roleKeys).toEqual(["ü"]);
  });

  it("accepts 200 role keys", async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `role-${String(i).padStart(3, "0")}`);
    const projectId = await createProject(c, orgB);
    for (const key of keys) await c.projects.ok("AddProjectRole", { projectId, role: { key, displayName: key } });
    const id = await createGrant(c, projectId, await createMachineUser(c, orgA), [...keys].reverse());
    expect((await getGrant(c, id)).grant.roleKeys).toEqual(keys);
  });

  it("deletes a grant; afterwards it is not found and a new one can be made", async () => {
    const projectId = await createProject(c, orgB, ["a"]);
    const userId = await createMachineUser(c, orgA);
    const id = await createGrant(c, projectId, userId, ["a"]);
    await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: [] } });
    const deleted = await c.grants.ok("DeleteUserGrant", { id });
    expect(deleted).toEqual({ details: { id, sequence: "3", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) } });
    expect(await c.grants.call("GetUserGrant", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await c.grants.call("DeleteUserGrant", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["a"] } })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ userId: { userId } }] })).result ?? []).toEqual([]);
    const again = await createGrant(c, projectId, userId, ["a"]);
    expect(again).not.toBe(id);
    expect((await getGrant(c, again)).details.sequence).toBe("1");
    expect(await c.grants.call("GetUserGrant", { id: "no-such-grant" })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await c.grants.call("GetUserGrant", { id: "" })).toMatchObject({ ok: false, code: Code.InvalidArgument });
  });

  it("answers NotFound when ctx names another organization than the grant's or the project's", async () => {
    const projectId = await createProject(c, orgA, ["a"]);
    const userId = await createMachineUser(c, orgB);
    // The user's organization is not the grant's.
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] }, ctx: { orgId: orgB } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] }, ctx: { orgId: "no-such-org" } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    const created = await c.grants.ok("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] }, ctx: { orgId: orgA } });
    const id = created.details.id;
    expect(created.details.resourceOwner).toEqual(orgOwner(orgA));

    for (const ctx of [{ orgId: orgB }, { orgId: server.defaultOrgId }]) {
      expect(await c.grants.call("GetUserGrant", { id, ctx })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await c.grants.call("PatchUserGrant", { id, grant: { roleKeys: [] }, ctx })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await c.grants.call("DeleteUserGrant", { id, ctx })).toMatchObject({ ok: false, code: Code.NotFound });
    }
    expect((await getGrant(c, id)).grant.roleKeys).toEqual(["a"]);
    expect((await c.grants.ok("GetUserGrant", { id, ctx: { orgId: orgA } })).grant.details.id).toBe(id);
    expect((await c.grants.ok("GetUserGrant", { id, ctx: { instanceId: server.instanceId } })).grant.details.id).toBe(id);
    expect((await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: [] }, ctx: { orgId: orgA } })).details.sequence).toBe("2");
    expect((await c.grants.ok("DeleteUserGrant", { id, ctx: { orgId: orgA } })).details.sequence).toBe("3");
  });

  it("does not reach users or projects of another instance", async () => {
    const other = await server.createInstance("127.0.0.1");
    const there = clients(other.baseUrl, other.adminToken);
    const theirProject = await createProject(there, other.orgId, ["a"]);
    const theirUser = await createMachineUser(there, other.orgId);
    const ourProject = await createProject(c, orgA, ["a"]);
    const ourUser = await createMachineUser(c, orgA);
    expect(await c.grants.call("CreateUserGrant", { projectId: ourProject, grant: { userId: theirUser, roleKeys: ["a"] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await c.grants.call("CreateUserGrant", { projectId: theirProject, grant: { userId: ourUser, roleKeys: ["a"] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    const theirs = await createGrant(there, theirProject, theirUser, ["a"]);
    const ours = await createGrant(c, ourProject, ourUser, ["a"]);
    expect(await c.grants.call("GetUserGrant", { id: theirs })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await there.grants.call("GetUserGrant", { id: ours })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await there.grants.call("DeleteUserGrant", { id: ours })).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await there.grants.ok("SearchUserGrants", {})).result.map((g: { details: { id: string } }) => g.details.id)).toEqual([theirs]);
    expect((await getGrant(there, theirs)).userOrgId).toBe(other.orgId);
  });

  it("answers FailedPrecondition on every method while multitenancy_resources_api is off", async () => {
    const projectId = await createProject(c, orgA, ["a"]);
    const userId = await createMachineUser(c, orgA);
    const id = await createGrant(c, projectId, userId, ["a"]);
    await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", false);
    try {
      const calls: [string, object][] = [
        ["CreateUserGrant", { projectId, grant: { userId, roleKeys: [] } }],
        ["GetUserGrant", { id }],
        ["PatchUserGrant", { id, grant: { roleKeys: [] } }],
        ["DeleteUserGrant", { id }],
        ["SearchUserGrants", {}],
      ];
      for (const [method, req] of calls) {
        expect(await c.grants.call(method, req as never), method).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      }
    } finally {
      await setInstanceFlag(server, server.instanceId, "multitenancy_resources_api", undefined);
    }
    expect(await getGrant(c, id)).toMatchObject({ details: { sequence: "1" }, grant: { roleKeys: ["a"] } });
  });
});
