import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { protocolClient, type CallResult as Result } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addRole, clients, createGrant, createMachineUser, createOrg, createProject, getGrant, sleep, type Clients } from "./helpers.js";

/** What removing roles, projects, users and organizations does to user grants, also while grants are being made. */
describe.each(DATABASE_KINDS)("user grant cascades (%s)", (kind) => {
  let server: TestServer;
  let c: Clients;

  beforeAll(async () => {
    server = await startTestServer(kind);
    c = clients(server.baseUrl, server.adminToken);
  });
  afterAll(() => server?.close());

  const exists = async (id: string) => {
    const r = await c.grants.call("GetUserGrant", { id });
    if (!r.ok) expect(r.code, r.message).toBe(Code.NotFound);
    return r.ok;
  };
  const rows = () => server.service.store.db.selectFrom("user_grants").selectAll().execute();

  /** Every grant in the table has its project, its user and only role keys its project has. */
  async function expectConsistent(label: string) {
    const db = server.service.store.db;
    const grants = await rows();
    const projects = new Set((await db.selectFrom("projects").select(["instance_id", "id"]).execute()).map((p) => `${p.instance_id}/${p.id}`));
    const users = new Set((await db.selectFrom("users").select(["instance_id", "id"]).execute()).map((u) => `${u.instance_id}/${u.id}`));
    const roles = new Set(
      (await db.selectFrom("project_roles").select(["instance_id", "project_id", "key"]).execute()).map((r) => `${r.instance_id}/${r.project_id}/${r.key}`),
    );
    const dangling = grants.flatMap((g) => {
      const problems: string[] = [];
      if (!projects.has(`${g.instance_id}/${g.project_id}`)) problems.push(`grant ${g.id}: no project ${g.project_id}`);
      if (!users.has(`${g.instance_id}/${g.user_id}`)) problems.push(`grant ${g.id}: no user ${g.user_id}`);
      for (const key of g.role_keys) if (!roles.has(`${g.instance_id}/${g.project_id}/${key}`)) problems.push(`grant ${g.id}: project has no role ${key}`);
      return problems;
    });
    expect(dangling, label).toEqual([]);
  }

  describe("removing a project role", () => {
    it("takes the key out of every grant that has it, each moving by one, and leaves the others alone", async () => {
      const org = await createOrg(c);
      const projectId = await createProject(c, org, ["a", "b", "c"]);
      const otherProject = await createProject(c, org, ["a", "b"]);
      const [u1, u2, u3, u4] = [
        await createMachineUser(c, org),
        await createMachineUser(c, await createOrg(c)),
        await createMachineUser(c, org),
        await createMachineUser(c, server.defaultOrgId),
      ];
      const withAB = await createGrant(c, projectId, u1!, ["a", "b"]);
      await c.grants.ok("PatchUserGrant", { id: withAB, grant: { roleKeys: ["a", "b", "c"] } }); // sequence 2
      const onlyB = await createGrant(c, projectId, u2!, ["b"]);
      const withoutB = await createGrant(c, projectId, u3!, ["a", "c"]);
      const empty = await createGrant(c, projectId, u4!, []);
      const elsewhere = await createGrant(c, otherProject, u1!, ["a", "b"]);
      const before = Object.fromEntries(await Promise.all([withAB, onlyB, withoutB, empty, elsewhere].map(async (id) => [id, await getGrant(c, id)])));

      await c.projects.ok("RemoveProjectRole", { projectId, key: "b" });

      const afterAB = await getGrant(c, withAB);
      expect(afterAB).toEqual({
        ...before[withAB],
        details: { ...before[withAB].details, sequence: "3", changeDate: expect.any(String) },
        grant: { userId: u1, roleKeys: ["a", "c"] },
      });
      // As instants: proto3 JSON drops a zero fraction ("…:05Z"), which sorts after "…:05.1Z" as text.
      expect(Date.parse(afterAB.details.changeDate)).toBeGreaterThan(Date.parse(before[withAB].details.changeDate));
      const afterB = await getGrant(c, onlyB);
      expect(afterB).toEqual({ ...before[onlyB], details: { ...before[onlyB].details, sequence: "2", changeDate: expect.any(String) }, grant: { userId: u2 } });
      for (const id of [withoutB, empty, elsewhere]) expect(await getGrant(c, id), id).toEqual(before[id]);

      // The key can no longer be given, until the role exists again; then grants have to ask for it anew.
      expect(await c.grants.call("PatchUserGrant", { id: withoutB, grant: { roleKeys: ["b"] } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      await addRole(c, projectId, "b");
      expect((await getGrant(c, withAB)).grant.roleKeys).toEqual(["a", "c"]);
      expect((await c.grants.ok("PatchUserGrant", { id: withoutB, grant: { roleKeys: ["b", "a", "c"] } })).details.sequence).toBe("2");

      // Removing the last key of every grant.
      await c.projects.ok("RemoveProjectRole", { projectId, key: "a" });
      await c.projects.ok("RemoveProjectRole", { projectId, key: "c" });
      expect(await getGrant(c, withAB)).toMatchObject({ details: { sequence: "5" }, grant: { userId: u1 } });
      expect((await getGrant(c, withAB)).grant.roleKeys).toBeUndefined();
      expect(await getGrant(c, withoutB)).toMatchObject({ details: { sequence: "4" }, grant: { roleKeys: ["b"] } });
      expect(await getGrant(c, elsewhere)).toEqual(before[elsewhere]);
      await expectConsistent("after role removals");
    });
  });

  it("removes the grants of a deleted project, and only those", async () => {
    const org = await createOrg(c);
    const doomed = await createProject(c, org, ["a"]);
    const kept = await createProject(c, org, ["a"]);
    const u1 = await createMachineUser(c, org);
    const u2 = await createMachineUser(c, await createOrg(c));
    const gone = [await createGrant(c, doomed, u1, ["a"]), await createGrant(c, doomed, u2, [])];
    const stay = [await createGrant(c, kept, u1, ["a"]), await createGrant(c, kept, u2, ["a"])];
    const before = await Promise.all(stay.map((id) => getGrant(c, id)));
    await c.projects.ok("DeleteProject", { id: doomed });
    for (const id of gone) expect(await exists(id), id).toBe(false);
    expect(await Promise.all(stay.map((id) => getGrant(c, id)))).toEqual(before);
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ projectId: { projectId: doomed } }] })).result ?? []).toEqual([]);
    expect(await c.grants.call("CreateUserGrant", { projectId: doomed, grant: { userId: u1, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    await expectConsistent("after project deletion");
  });

  it("removes the grants of a deleted user, and only those", async () => {
    const orgA = await createOrg(c);
    const orgB = await createOrg(c);
    const pA = await createProject(c, orgA, ["a"]);
    const pB = await createProject(c, orgB, ["b"]);
    const doomed = await createMachineUser(c, orgA);
    const kept = await createMachineUser(c, orgA);
    const gone = [await createGrant(c, pA, doomed, ["a"]), await createGrant(c, pB, doomed, ["b"])];
    const stay = [await createGrant(c, pA, kept, ["a"]), await createGrant(c, pB, kept, ["b"])];
    const before = await Promise.all(stay.map((id) => getGrant(c, id)));
    await c.users.ok("DeleteUser", { id: doomed });
    for (const id of gone) expect(await exists(id), id).toBe(false);
    expect(await Promise.all(stay.map((id) => getGrant(c, id)))).toEqual(before);
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ userId: { userId: doomed } }] })).result ?? []).toEqual([]);
    expect(await c.grants.call("CreateUserGrant", { projectId: pA, grant: { userId: doomed, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    await expectConsistent("after user deletion");
  });

  it("removes, with an organization, the grants on its projects and those of its users on other organizations' projects", async () => {
    const doomedOrg = await createOrg(c);
    const otherOrg = await createOrg(c);
    const ownProject = await createProject(c, doomedOrg, ["a"]);
    const foreignProject = await createProject(c, otherOrg, ["a"]);
    const ownUser = await createMachineUser(c, doomedOrg);
    const foreignUser = await createMachineUser(c, otherOrg);
    const gone = [
      await createGrant(c, ownProject, ownUser, ["a"]),
      await createGrant(c, ownProject, foreignUser, ["a"]),
      await createGrant(c, foreignProject, ownUser, ["a"]),
    ];
    const stay = await createGrant(c, foreignProject, foreignUser, ["a"]);
    const before = await getGrant(c, stay);
    await c.orgs.ok("DeleteOrganization", { id: doomedOrg });
    for (const id of gone) expect(await exists(id), id).toBe(false);
    expect(await getGrant(c, stay)).toEqual(before);
    const left = await server.service.store.db
      .selectFrom("user_grants")
      .select("id")
      .where("id", "in", [...gone, stay])
      .execute();
    expect(left.map((r) => r.id)).toEqual([stay]);
    await expectConsistent("after organization deletion");
  });

  it("removes the grants, projects and roles of a deleted instance, and nothing of another", async () => {
    const other = await server.createInstance("127.0.0.1");
    const there = clients(other.baseUrl, other.adminToken);
    const theirProject = await createProject(there, other.orgId, ["a"]);
    const theirGrant = await createGrant(there, theirProject, await createMachineUser(there, other.orgId), ["a"]);
    const org = await createOrg(c);
    const ours = await createGrant(c, await createProject(c, org, ["a"]), await createMachineUser(c, org), ["a"]);
    const before = await getGrant(c, ours);
    expect(await server.service.store.db.selectFrom("user_grants").select("id").where("instance_id", "=", other.instanceId).execute()).toEqual([
      { id: theirGrant },
    ]);
    const deleted = await protocolClient(PlatformInstances, "grpc", server.baseUrl).call("DeleteInstance", { id: other.instanceId }, server.adminToken);
    expect(deleted, JSON.stringify(deleted)).toMatchObject({ ok: true });
    const db = server.service.store.db;
    expect(await db.selectFrom("user_grants").select("id").where("instance_id", "=", other.instanceId).execute()).toEqual([]);
    expect(await db.selectFrom("project_roles").select("key").where("instance_id", "=", other.instanceId).execute()).toEqual([]);
    expect(await getGrant(c, ours)).toEqual(before);
    await expectConsistent("after instance deletion");
  });

  describe("concurrently", () => {
    const ROUNDS = 10;
    const okOr = (r: Result, ...codes: Code[]) => {
      if (!r.ok) expect(codes, `${r.code} ${r.message}`).toContain(r.code);
    };

    it("never keeps a role key whose role is being removed while grants are created and patched", async () => {
      const org = await createOrg(c);
      for (let round = 0; round < ROUNDS; round++) {
        const projectId = await createProject(c, org, ["a", "b"]);
        const users = await Promise.all(Array.from({ length: 4 }, () => createMachineUser(c, org)));
        const patched = await createGrant(c, projectId, await createMachineUser(c, org), ["b"]);
        const results = await Promise.all([
          ...users.map((userId, i) =>
            new Promise((r) => setTimeout(r, i)).then(() =>
              c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: i % 2 ? ["a", "b"] : ["a"] } }),
            ),
          ),
          c.grants.call("PatchUserGrant", { id: patched, grant: { roleKeys: ["a", "b"] } }),
          c.projects.call("RemoveProjectRole", { projectId, key: "a" }),
        ]);
        const removal = results.pop()!;
        expect(removal, JSON.stringify(removal)).toMatchObject({ ok: true });
        for (const r of results) okOr(r, Code.FailedPrecondition);
        const grants = await server.service.store.db.selectFrom("user_grants").selectAll().where("project_id", "=", projectId).execute();
        expect(
          grants.filter((g) => g.role_keys.includes("a")),
          `round ${round}`,
        ).toEqual([]);
        // A grant made before the removal lost the key with an event of its own; its sequence shows it.
        for (const g of grants) {
          const got = await getGrant(c, g.id);
          expect(got.grant.roleKeys ?? [], g.id).toEqual(g.role_keys.filter((k) => k !== "a"));
        }
      }
      await expectConsistent("after role removal races");
    });

    it("leaves no grant of a project that is being deleted", async () => {
      const org = await createOrg(c);
      for (let round = 0; round < ROUNDS; round++) {
        const projectId = await createProject(c, org, ["a", "b"]);
        const users = await Promise.all(Array.from({ length: 4 }, () => createMachineUser(c, org)));
        const existing = await Promise.all(Array.from({ length: 2 }, async () => createGrant(c, projectId, await createMachineUser(c, org), ["a"])));
        const results = await Promise.all([
          ...users.map((userId, i) =>
            new Promise((r) => setTimeout(r, i)).then(() => c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] } })),
          ),
          ...existing.map((id, i) => new Promise((r) => setTimeout(r, i)).then(() => c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["a", "b"] } }))),
          c.projects.call("DeleteProject", { id: projectId }),
        ]);
        const deletion = results.pop()!;
        expect(deletion, JSON.stringify(deletion)).toMatchObject({ ok: true });
        for (const r of results) okOr(r, Code.NotFound);
        expect(await server.service.store.db.selectFrom("user_grants").selectAll().where("project_id", "=", projectId).execute(), `round ${round}`).toEqual([]);
      }
      await expectConsistent("after project deletion races");
    });

    it("leaves no grant of a user who is being deleted", async () => {
      const org = await createOrg(c);
      const projects = await Promise.all(Array.from({ length: 4 }, () => createProject(c, org, ["a"])));
      for (let round = 0; round < ROUNDS; round++) {
        const userId = await createMachineUser(c, org);
        const results = await Promise.all([
          ...projects.map((projectId, i) =>
            new Promise((r) => setTimeout(r, i)).then(() => c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] } })),
          ),
          c.users.call("DeleteUser", { id: userId }),
        ]);
        const deletion = results.pop()!;
        expect(deletion, JSON.stringify(deletion)).toMatchObject({ ok: true });
        for (const r of results) okOr(r, Code.NotFound);
        expect(await server.service.store.db.selectFrom("user_grants").selectAll().where("user_id", "=", userId).execute(), `round ${round}`).toEqual([]);
      }
      await expectConsistent("after user deletion races");
    });

    it("leaves no grant of an organization that is being deleted, on its projects or of its users", async () => {
      const stable = await createOrg(c);
      const stableProject = await createProject(c, stable, ["a"]);
      for (let round = 0; round < ROUNDS; round++) {
        const doomed = await createOrg(c);
        const ownProject = await createProject(c, doomed, ["a"]);
        const ownUsers = await Promise.all(Array.from({ length: 2 }, () => createMachineUser(c, doomed)));
        const foreignUsers = await Promise.all(Array.from({ length: 2 }, () => createMachineUser(c, stable)));
        const creations = [
          ...ownUsers.map((userId) => ({ projectId: stableProject, userId })),
          ...foreignUsers.map((userId) => ({ projectId: ownProject, userId })),
          ...ownUsers.map((userId) => ({ projectId: ownProject, userId })),
        ];
        const results = await Promise.all([
          ...creations.map(({ projectId, userId }, i) =>
            new Promise((r) => setTimeout(r, i % 4)).then(() => c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] } })),
          ),
          c.orgs.call("DeleteOrganization", { id: doomed }),
        ]);
        const deletion = results.pop()!;
        expect(deletion, JSON.stringify(deletion)).toMatchObject({ ok: true });
        for (const r of results) okOr(r, Code.NotFound);
        const left = await server.service.store.db
          .selectFrom("user_grants")
          .select(["id", "project_id", "user_id"])
          .where((eb) => eb.or([eb("project_id", "=", ownProject), eb("user_id", "in", ownUsers), eb("org_id", "=", doomed)]))
          .execute();
        expect(left, `round ${round}`).toEqual([]);
      }
      await expectConsistent("after organization deletion races");
    });

    it("moves a grant by one per role that concurrent removals take from it", async () => {
      const org = await createOrg(c);
      for (let round = 0; round < ROUNDS / 2; round++) {
        const projectId = await createProject(c, org, ["a", "b", "c", "d"]);
        const ids = await Promise.all(Array.from({ length: 3 }, async () => createGrant(c, projectId, await createMachineUser(c, org), ["a", "b", "c"])));
        const untouched = await createGrant(c, projectId, await createMachineUser(c, org), ["d"]);
        const before = await getGrant(c, untouched);
        const removed = await Promise.all(["a", "b", "c"].map((key) => c.projects.call("RemoveProjectRole", { projectId, key })));
        for (const r of removed) expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
        for (const id of ids) {
          const got = await getGrant(c, id);
          expect(got.details.sequence, `round ${round}`).toBe("4");
          expect(got.grant.roleKeys).toBeUndefined();
          const events = await server.service.store.db
            .selectFrom("events")
            .select(["sequence", "event_type"])
            .where("aggregate_type", "=", "user_grant")
            .where("aggregate_id", "=", id)
            .orderBy("sequence")
            .execute();
          expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
        }
        expect(await getGrant(c, untouched)).toEqual(before);
      }
      await expectConsistent("after concurrent role removals");
    });

    it("serializes patches and deletions of one grant", async () => {
      const org = await createOrg(c);
      const projectId = await createProject(c, org, ["a", "b", "c"]);
      const sets = [["a"], ["b"], ["a", "b"], ["c"], [], ["a", "b", "c"]];
      for (let round = 0; round < ROUNDS / 2; round++) {
        const id = await createGrant(c, projectId, await createMachineUser(c, org), ["a"]);
        const patches = await Promise.all(sets.map((roleKeys) => c.grants.call("PatchUserGrant", { id, grant: { roleKeys } })));
        for (const r of patches) expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
        const got = await getGrant(c, id);
        // Every answered sequence is distinct unless a patch changed nothing; the grant's sequence counts its events.
        const events = await server.service.store.db
          .selectFrom("events")
          .select("sequence")
          .where("aggregate_type", "=", "user_grant")
          .where("aggregate_id", "=", id)
          .execute();
        expect(got.details.sequence).toBe(String(events.length));
        expect(sets.map((k) => JSON.stringify([...k].sort()))).toContain(JSON.stringify(got.grant.roleKeys ?? []));
        const [deleted, ...others] = await Promise.all([
          c.grants.call("DeleteUserGrant", { id }),
          ...sets.map((roleKeys) => c.grants.call("PatchUserGrant", { id, grant: { roleKeys } })),
          c.grants.call("DeleteUserGrant", { id }),
        ]);
        const deletions = [deleted!, others.pop()!];
        expect(
          deletions.filter((r) => r.ok),
          `round ${round}`,
        ).toHaveLength(1);
        for (const r of [...deletions, ...others]) okOr(r, Code.NotFound);
        expect(await exists(id)).toBe(false);
      }
      expect(await server.service.store.db.selectFrom("user_grants").select("id").where("project_id", "=", projectId).execute()).toEqual([]);
    });

    it("patches grants while their roles and projects are removed without deadlocking", async () => {
      const deadlocks = async () => {
        if (kind !== "postgres") return 0;
        // Backends report their counters when idle, within a second.
        await sleep(1200);
        const { rows } = await sql<{ deadlocks: string }>`select deadlocks from pg_stat_database where datname = current_database()`.execute(
          server.service.store.db,
        );
        return Number(rows[0]!.deadlocks);
      };
      const before = await deadlocks();
      const org = await createOrg(c);
      for (let round = 0; round < ROUNDS; round++) {
        const doomed = await createProject(c, org, ["a", "b"]);
        const kept = await createProject(c, org, ["a", "b"]);
        const onDoomed = await Promise.all([0, 1].map(async () => createGrant(c, doomed, await createMachineUser(c, org), ["a"])));
        const onKept = await Promise.all([0, 1].map(async () => createGrant(c, kept, await createMachineUser(c, org), ["a"])));
        const results = await Promise.all([
          ...[...onDoomed, ...onKept].map((id, i) =>
            new Promise((r) => setTimeout(r, i % 2)).then(() => c.grants.call("PatchUserGrant", { id, grant: { roleKeys: ["b", "a"] } })),
          ),
          c.projects.call("DeleteProject", { id: doomed }),
          c.projects.call("RemoveProjectRole", { projectId: kept, key: "a" }),
        ]);
        const [deleted, removed] = results.splice(-2);
        expect(deleted, JSON.stringify(deleted)).toMatchObject({ ok: true });
        expect(removed, JSON.stringify(removed)).toMatchObject({ ok: true });
        for (const r of results.slice(0, 2)) okOr(r, Code.NotFound);
        for (const [i, id] of onKept.entries()) {
          const patched = results[2 + i]!;
          okOr(patched, Code.FailedPrecondition);
          const got = await getGrant(c, id);
          // Patched first: a+b, then a removed (3 events); removed first: the patch is refused, a removed (2 events).
          if (patched.ok) expect({ sequence: got.details.sequence, keys: got.grant.roleKeys }, `round ${round}`).toEqual({ sequence: "3", keys: ["b"] });
          else expect({ sequence: got.details.sequence, keys: got.grant.roleKeys }, `round ${round}`).toEqual({ sequence: "2", keys: undefined });
        }
      }
      expect(await deadlocks(), "deadlocks detected by PostgreSQL").toBe(before);
      await expectConsistent("after patch races");
    });

    it("removes every cross grant when two organizations are deleted at once", async () => {
      for (let round = 0; round < 3; round++) {
        const [a, b] = [await createOrg(c), await createOrg(c)];
        const [pa, pb] = [await createProject(c, a, ["r"]), await createProject(c, b, ["r"])];
        const [ua, ub] = [await createMachineUser(c, a), await createMachineUser(c, b)];
        const ids = [
          await createGrant(c, pa, ua, ["r"]),
          await createGrant(c, pb, ua, ["r"]),
          await createGrant(c, pa, ub, ["r"]),
          await createGrant(c, pb, ub, ["r"]),
        ];
        const deleted = await Promise.all([c.orgs.call("DeleteOrganization", { id: a }), c.orgs.call("DeleteOrganization", { id: b })]);
        for (const r of deleted) expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
        expect(await server.service.store.db.selectFrom("user_grants").select("id").where("id", "in", ids).execute(), `round ${round}`).toEqual([]);
      }
      await expectConsistent("after concurrent organization deletions");
    });

    it("makes one grant per user and project when the same grant is created at once", async () => {
      const org = await createOrg(c);
      const projectId = await createProject(c, org, ["a"]);
      for (let round = 0; round < ROUNDS; round++) {
        const userId = await createMachineUser(c, org);
        const results = await Promise.all(Array.from({ length: 4 }, () => c.grants.call("CreateUserGrant", { projectId, grant: { userId, roleKeys: ["a"] } })));
        expect(
          results.filter((r) => r.ok),
          `round ${round}`,
        ).toHaveLength(1);
        for (const r of results) okOr(r, Code.AlreadyExists);
        expect(await server.service.store.db.selectFrom("user_grants").select("id").where("user_id", "=", userId).execute()).toHaveLength(1);
      }
    });
  });
});
