import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import type { Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  ACTIVE,
  INACTIVE,
  createGrant,
  createMachineUser,
  createOrg,
  createProject,
  grantClient,
  orgClient,
  orgOwner,
  projectClient,
  role,
  userClient,
  type Client,
} from "./helpers.js";

/** PlatformProjects: create, read, patch, states, roles and every cascade of a removal. */
describe.each(DATABASE_KINDS)("project lifecycle (%s)", (kind) => {
  let server: TestServer;
  let projects: Client;
  let grants: Client;
  let orgA: string;
  let orgB: string;
  let counter = 0;
  const unique = (prefix: string) => `${prefix} ${++counter}`;

  beforeAll(async () => {
    server = await startTestServer(kind);
    projects = projectClient(server.baseUrl, server.adminToken);
    grants = grantClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "Lifecycle Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "Lifecycle Org B");
  });
  afterAll(() => server?.close());

  const get = async (id: string) => (await projects.ok("GetProject", { id })).project;
  const seq = async (id: string) => (await get(id)).details.sequence as string;
  const getGrant = (id: string) => grants.call("GetUserGrant", { id });
  const code = (r: CallResult) => (r.ok ? "ok" : r.code);

  describe("create and get", () => {
    it("creates in the default organization without ctx, with sequence 1, and reads it back", async () => {
      const made = await projects.ok("CreateProject", { project: { name: "Default Project", projectRoleAssertion: true } });
      expect(made).toEqual({
        details: { id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(server.defaultOrgId) },
      });
      const got = await projects.ok("GetProject", { id: made.details.id });
      expect(got).toEqual({
        project: {
          details: { id: made.details.id, sequence: "1", changeDate: made.details.changeDate, resourceOwner: orgOwner(server.defaultOrgId) },
          project: { name: "Default Project", projectRoleAssertion: true },
          state: ACTIVE,
        },
      });
    });

    it("creates in the organization of ctx.orgId or ctx.orgDomain, and the instance ctx means the default organization", async () => {
      const byId = await projects.ok("CreateProject", { project: { name: "In A", projectRoleCheck: true }, ctx: { orgId: orgA } });
      expect(byId.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(orgA) });
      const byDomain = await projects.ok("CreateProject", { project: { name: "In B" }, ctx: { orgDomain: "lifecycle-org-b.localhost" } });
      expect(byDomain.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(orgB) });
      const byInstance = await projects.ok("CreateProject", { project: { name: "In Instance" }, ctx: { instanceId: server.instanceId } });
      expect(byInstance.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(server.defaultOrgId) });
      expect((await get(byId.details.id)).project).toEqual({ name: "In A", projectRoleCheck: true });
      expect((await get(byDomain.details.id)).project).toEqual({ name: "In B" });
      // A ctx naming the project's own organization finds it.
      expect((await projects.ok("GetProject", { id: byId.details.id, ctx: { orgId: orgA } })).project.details.id).toBe(byId.details.id);
    });

    it("a system member creates in another instance's default organization with an instance ctx", async () => {
      const other = await server.createInstance("127.0.0.1");
      const made = await projects.ok("CreateProject", { project: { name: "Remote" }, ctx: { instanceId: other.instanceId } });
      expect(made.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(other.orgId) });
      // It lives in that instance, not in ours.
      expect(await projects.call("GetProject", { id: made.details.id })).toMatchObject({ ok: false, code: Code.NotFound });
      const theirs = projectClient(other.baseUrl, other.adminToken);
      expect((await theirs.ok("GetProject", { id: made.details.id })).project).toMatchObject({
        project: { name: "Remote" },
        details: { resourceOwner: orgOwner(other.orgId) },
      });
      expect((await projects.ok("GetProject", { id: made.details.id, ctx: { instanceId: other.instanceId } })).project.project.name).toBe("Remote");
    });

    it("refuses a name taken in the organization in any case; the same name in another org is fine", async () => {
      await createProject(projects, "Shared Name", { orgId: orgA });
      for (const name of ["Shared Name", "shared name", "SHARED NAME"]) {
        expect(await projects.call("CreateProject", { project: { name }, ctx: { orgId: orgA } }), name).toMatchObject({ ok: false, code: Code.AlreadyExists });
      }
      const inB = await projects.ok("CreateProject", { project: { name: "shared NAME" }, ctx: { orgId: orgB } });
      expect(inB.details.resourceOwner).toEqual(orgOwner(orgB));
      const inDefault = await projects.ok("CreateProject", { project: { name: "Shared Name" } });
      expect(inDefault.details.resourceOwner).toEqual(orgOwner(server.defaultOrgId));
    });

    it("validates the name (1..200) and requires the project", async () => {
      expect(await projects.call("CreateProject", { project: { name: "" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await projects.call("CreateProject", { project: { name: "x".repeat(201) } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await projects.call("CreateProject", {})).toMatchObject({ ok: false, code: Code.InvalidArgument });
      const long = await projects.ok("CreateProject", { project: { name: "y".repeat(200) } });
      expect((await get(long.details.id)).project.name).toBe("y".repeat(200));
    });

    it("answers NotFound for unknown ids and an unknown organization ctx", async () => {
      expect(await projects.call("GetProject", { id: "no-such-project" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("CreateProject", { project: { name: "Ghost" }, ctx: { orgId: "no-such-org" } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      for (const [method, req] of [
        ["PatchProject", { id: "no-such-project", project: { name: "x" } }],
        ["DeleteProject", { id: "no-such-project" }],
        ["DeactivateProject", { id: "no-such-project" }],
        ["ReactivateProject", { id: "no-such-project" }],
        ["AddProjectRole", { projectId: "no-such-project", role: role("k") }],
        ["PatchProjectRole", { projectId: "no-such-project", key: "k", role: { displayName: "x" } }],
        ["RemoveProjectRole", { projectId: "no-such-project", key: "k" }],
        ["SearchProjectRoles", { projectId: "no-such-project" }],
      ] as const) {
        expect(await projects.call(method, req), method).toMatchObject({ ok: false, code: Code.NotFound });
      }
    });

    it("answers NotFound when ctx names another organization than the project's", async () => {
      const id = await createProject(projects, unique("Ctx Mismatch"), { orgId: orgA });
      await projects.ok("AddProjectRole", { projectId: id, role: role("r") });
      const other = { orgId: orgB };
      for (const [method, req] of [
        ["GetProject", { id, ctx: other }],
        ["PatchProject", { id, project: { name: "moved?" }, ctx: other }],
        ["DeactivateProject", { id, ctx: other }],
        ["ReactivateProject", { id, ctx: other }],
        ["DeleteProject", { id, ctx: other }],
        ["AddProjectRole", { projectId: id, role: role("s"), ctx: other }],
        ["PatchProjectRole", { projectId: id, key: "r", role: { displayName: "x" }, ctx: other }],
        ["RemoveProjectRole", { projectId: id, key: "r", ctx: other }],
        ["SearchProjectRoles", { projectId: id, ctx: other }],
        ["GetProject", { id, ctx: { orgId: server.defaultOrgId } }],
      ] as const) {
        expect(await projects.call(method, req), method).toMatchObject({ ok: false, code: Code.NotFound });
      }
      // Nothing changed.
      expect(await get(id)).toMatchObject({ details: { sequence: "2" }, project: { name: expect.stringContaining("Ctx Mismatch") }, state: ACTIVE });
    });
  });

  describe("patch", () => {
    it("changes only the given fields, one event per effective change; a no-op keeps the sequence", async () => {
      const id = await createProject(projects, "Patch Me", { orgId: orgA }, { projectRoleAssertion: true });
      const created = await get(id);
      const renamed = await projects.ok("PatchProject", { id, project: { name: "Patched" } });
      expect(renamed).toEqual({ details: { id, sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
      expect(await get(id)).toEqual({
        details: { id, sequence: "2", changeDate: renamed.details.changeDate, resourceOwner: orgOwner(orgA) },
        project: { name: "Patched", projectRoleAssertion: true },
        state: ACTIVE,
      });
      // As instants: proto3 JSON drops a zero fraction ("…:05Z"), which sorts after "…:05.1Z" as text.
      expect(Date.parse(renamed.details.changeDate)).toBeGreaterThanOrEqual(Date.parse(created.details.changeDate));

      const flags = await projects.ok("PatchProject", { id, project: { projectRoleAssertion: false, projectRoleCheck: true } });
      expect(flags.details.sequence).toBe("3");
      expect((await get(id)).project).toEqual({ name: "Patched", projectRoleCheck: true });

      // Nothing, or the current values again: no event.
      for (const project of [{}, { name: "Patched" }, { projectRoleCheck: true, projectRoleAssertion: false }] as JsonObject[]) {
        const same = await projects.ok("PatchProject", { id, project });
        expect(same.details, JSON.stringify(project)).toEqual({ id, sequence: "3", changeDate: flags.details.changeDate, resourceOwner: orgOwner(orgA) });
      }
      expect(await seq(id)).toBe("3");
    });

    it("refuses renaming onto another project's name of the org in any case; allows a case variant of its own", async () => {
      const first = await createProject(projects, "Rename Taken", { orgId: orgA });
      const second = await createProject(projects, "Rename Mover", { orgId: orgA });
      await createProject(projects, "Rename Elsewhere", { orgId: orgB });
      for (const name of ["Rename Taken", "rename taken", "RENAME TAKEN"]) {
        expect(await projects.call("PatchProject", { id: second, project: { name } }), name).toMatchObject({ ok: false, code: Code.AlreadyExists });
      }
      expect(await seq(second)).toBe("1");
      // Another organization's name is free here.
      expect((await projects.ok("PatchProject", { id: second, project: { name: "Rename Elsewhere" } })).details.sequence).toBe("2");
      // Its own name in another case is a change (one event), not a clash.
      const upper = await projects.ok("PatchProject", { id: first, project: { name: "RENAME TAKEN" } });
      expect(upper.details.sequence).toBe("2");
      expect((await get(first)).project.name).toBe("RENAME TAKEN");
      expect(await projects.call("PatchProject", { id: first, project: { name: "" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await projects.call("PatchProject", { id: first })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    });
  });

  describe("states", () => {
    it("deactivates and reactivates once each; the same state again is FailedPrecondition", async () => {
      const id = await createProject(projects, unique("Stateful"), { orgId: orgA });
      const off = await projects.ok("DeactivateProject", { id });
      expect(off).toEqual({ details: { id, sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
      expect((await get(id)).state).toBe(INACTIVE);
      expect(await projects.call("DeactivateProject", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      // An inactive project can still be patched and given roles.
      expect((await projects.ok("PatchProject", { id, project: { projectRoleCheck: true } })).details.sequence).toBe("3");
      expect((await projects.ok("AddProjectRole", { projectId: id, role: role("while-inactive") })).details.sequence).toBe("4");
      const on = await projects.ok("ReactivateProject", { id });
      expect(on.details).toMatchObject({ id, sequence: "5" });
      expect(await get(id)).toMatchObject({ state: ACTIVE, details: { sequence: "5" } });
      expect(await projects.call("ReactivateProject", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect(await seq(id)).toBe("5");
    });
  });

  describe("roles", () => {
    it("adds roles: key as id, the project's new sequence, owned by its org; duplicates AlreadyExists", async () => {
      const id = await createProject(projects, unique("Roles"), { orgId: orgB });
      const added = await projects.ok("AddProjectRole", { projectId: id, role: role("admin", "Administrator", "ops") });
      expect(added).toEqual({ details: { id: "admin", sequence: "2", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) } });
      expect(await get(id)).toMatchObject({ details: { sequence: "2", changeDate: added.details.changeDate } });
      const viewer = await projects.ok("AddProjectRole", { projectId: id, role: role("viewer", "Viewer") });
      expect(viewer.details).toMatchObject({ id: "viewer", sequence: "3" });
      expect(await projects.call("AddProjectRole", { projectId: id, role: role("admin", "Again") })).toMatchObject({ ok: false, code: Code.AlreadyExists });
      // Keys are case-sensitive.
      expect((await projects.ok("AddProjectRole", { projectId: id, role: role("ADMIN", "Upper") })).details).toMatchObject({ id: "ADMIN", sequence: "4" });
      expect(await seq(id)).toBe("4");

      const found = await projects.ok("SearchProjectRoles", { projectId: id, query: { asc: true } });
      const details = (key: string) => ({ id: key, sequence: "4", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) });
      expect(found.result).toEqual([
        { details: details("ADMIN"), role: { key: "ADMIN", displayName: "Upper" } },
        { details: details("admin"), role: { key: "admin", displayName: "Administrator", group: "ops" } },
        { details: details("viewer"), role: { key: "viewer", displayName: "Viewer" } },
      ]);
    });

    it("validates keys (no whitespace, 1..200), display names (1..200) and groups (≤200)", async () => {
      const id = await createProject(projects, unique("Role Validation"), { orgId: orgB });
      for (const r of [
        role("has space"),
        role("tab\tkey"),
        role(""),
        role("k".repeat(201)),
        role("ok", ""),
        role("ok", "d".repeat(201)),
        role("ok", "ok", "g".repeat(201)),
      ]) {
        expect(await projects.call("AddProjectRole", { projectId: id, role: r }), JSON.stringify(r)).toMatchObject({ ok: false, code: Code.InvalidArgument });
      }
      expect(await projects.call("AddProjectRole", { projectId: id })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await seq(id)).toBe("1");
      const max = await projects.ok("AddProjectRole", { projectId: id, role: role("k".repeat(200), "d".repeat(200), "g".repeat(200)) });
      expect(max.details).toMatchObject({ id: "k".repeat(200), sequence: "2" });
      expect(await projects.call("PatchProjectRole", { projectId: id, key: "k".repeat(200), role: { displayName: "" } })).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
      });
      expect(await projects.call("PatchProjectRole", { projectId: id, key: "k".repeat(200), role: { group: "g".repeat(201) } })).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
      });
    });

    it("patches display name and group; a no-op keeps the sequence; an unknown key is NotFound", async () => {
      const id = await createProject(projects, unique("Role Patch"), { orgId: orgA });
      await projects.ok("AddProjectRole", { projectId: id, role: role("editor", "Editor", "content") });
      const patched = await projects.ok("PatchProjectRole", { projectId: id, key: "editor", role: { displayName: "Content Editor" } });
      expect(patched).toEqual({ details: { id: "editor", sequence: "3", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
      const rows = async () => (await projects.ok("SearchProjectRoles", { projectId: id })).result.map((r: Msg) => r.role);
      expect(await rows()).toEqual([{ key: "editor", displayName: "Content Editor", group: "content" }]);
      // An empty group removes it.
      expect((await projects.ok("PatchProjectRole", { projectId: id, key: "editor", role: { group: "" } })).details.sequence).toBe("4");
      expect(await rows()).toEqual([{ key: "editor", displayName: "Content Editor" }]);
      for (const r of [{}, { displayName: "Content Editor" }, { group: "" }, { displayName: "Content Editor", group: "" }] as JsonObject[]) {
        expect((await projects.ok("PatchProjectRole", { projectId: id, key: "editor", role: r })).details, JSON.stringify(r)).toMatchObject({
          id: "editor",
          sequence: "4",
        });
      }
      expect(await projects.call("PatchProjectRole", { projectId: id, key: "nobody", role: { displayName: "x" } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      expect(await projects.call("PatchProjectRole", { projectId: id, key: "EDITOR", role: { displayName: "x" } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      expect(await seq(id)).toBe("4");
    });

    it("removes a role: the project's sequence moves; unknown or removed again NotFound; the key can be added again", async () => {
      const id = await createProject(projects, unique("Role Remove"), { orgId: orgA });
      await projects.ok("AddProjectRole", { projectId: id, role: role("temp", "Temporary") });
      const removed = await projects.ok("RemoveProjectRole", { projectId: id, key: "temp" });
      expect(removed).toEqual({ details: { id: "temp", sequence: "3", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) } });
      expect(await seq(id)).toBe("3");
      expect(await projects.call("RemoveProjectRole", { projectId: id, key: "temp" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("RemoveProjectRole", { projectId: id, key: "never" })).toMatchObject({ ok: false, code: Code.NotFound });
      expect((await projects.ok("SearchProjectRoles", { projectId: id })).result ?? []).toEqual([]);
      expect((await projects.ok("AddProjectRole", { projectId: id, role: role("temp", "Again") })).details.sequence).toBe("4");
    });

    it("takes a removed role out of every grant on the project that gives it, each with a new sequence", async () => {
      const id = await createProject(projects, unique("Role Cascade"), { orgId: orgA });
      const otherProject = await createProject(projects, unique("Role Cascade Other"), { orgId: orgA });
      for (const k of ["a", "b"]) {
        await projects.ok("AddProjectRole", { projectId: id, role: role(k) });
        await projects.ok("AddProjectRole", { projectId: otherProject, role: role(k) });
      }
      const u1 = await createMachineUser(server.baseUrl, server.adminToken, `cascade-1-${counter}`);
      const u2 = await createMachineUser(server.baseUrl, server.adminToken, `cascade-2-${counter}`, orgB);
      const u3 = await createMachineUser(server.baseUrl, server.adminToken, `cascade-3-${counter}`);
      const both = await createGrant(grants, id, u1, ["a", "b"]);
      const onlyA = await createGrant(grants, id, u2, ["a"]);
      const onlyB = await createGrant(grants, id, u3, ["b"]);
      const elsewhere = await createGrant(grants, otherProject, u1, ["a", "b"]);

      expect((await projects.ok("RemoveProjectRole", { projectId: id, key: "a" })).details.sequence).toBe("4");
      const grant = async (gid: string) => (await grants.ok("GetUserGrant", { id: gid })).grant;
      expect(await grant(both)).toMatchObject({ details: { sequence: "2" }, projectId: id, grant: { userId: u1, roleKeys: ["b"] } });
      const emptied = await grant(onlyA);
      expect(emptied).toMatchObject({ details: { sequence: "2" }, projectId: id, grant: { userId: u2 } });
      expect(emptied.grant.roleKeys ?? []).toEqual([]);
      expect(await grant(onlyB)).toMatchObject({ details: { sequence: "1" }, grant: { roleKeys: ["b"] } });
      expect(await grant(elsewhere)).toMatchObject({ details: { sequence: "1" }, grant: { roleKeys: ["a", "b"] } });
      // A grant can no longer give the removed key.
      expect(await grants.call("PatchUserGrant", { id: onlyB, grant: { roleKeys: ["a", "b"] } })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    });
  });

  describe("concurrency", () => {
    it("lets exactly one of several concurrent creations of one name (any case) in an org win", async () => {
      const org = await createOrg(server.baseUrl, server.adminToken, unique("Race Org"));
      const variants = ["Race", "race", "RACE", "rAce", "raCe", "racE"];
      const results = await Promise.all(variants.map((name) => projects.call("CreateProject", { project: { name }, ctx: { orgId: org } })));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).map(code)).toEqual(Array(5).fill(Code.AlreadyExists));
      const found = await projects.ok("SearchProjects", { ctx: { orgId: org } });
      expect(found.result).toHaveLength(1);
    });

    it("serializes concurrent role changes of one project: every event gets its own sequence", async () => {
      const id = await createProject(projects, unique("Role Race"), { orgId: orgA });
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
      const added = await Promise.all(keys.map((k) => projects.ok("AddProjectRole", { projectId: id, role: role(k) })));
      expect(added.map((a: Msg) => Number(a.details.sequence)).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      expect(await seq(id)).toBe("9");
      const same = await Promise.all(Array.from({ length: 4 }, () => projects.call("AddProjectRole", { projectId: id, role: role("dup") })));
      expect(same.map(code).sort()).toEqual(["ok", Code.AlreadyExists, Code.AlreadyExists, Code.AlreadyExists].sort());
      expect(await seq(id)).toBe("10");
    });

    it("never leaves a grant with a removed role or on a deleted project, whichever comes first", async () => {
      for (let round = 0; round < 4; round++) {
        const id = await createProject(projects, unique("Grant Race"), { orgId: orgB });
        await projects.ok("AddProjectRole", { projectId: id, role: role("gone") });
        await projects.ok("AddProjectRole", { projectId: id, role: role("kept") });
        const users = await Promise.all([0, 1, 2].map((i) => createMachineUser(server.baseUrl, server.adminToken, `race-${counter}-${i}`)));
        const [removal, ...created] = await Promise.all([
          projects.call("RemoveProjectRole", { projectId: id, key: "gone" }),
          ...users.map((u) => grants.call("CreateUserGrant", { projectId: id, grant: { userId: u, roleKeys: ["gone", "kept"] } })),
        ]);
        expect(removal).toMatchObject({ ok: true });
        for (const c of created) {
          if (!c.ok) {
            expect(c.code).toBe(Code.FailedPrecondition);
            continue;
          }
          const g = (await grants.ok("GetUserGrant", { id: (c.message as Msg).details.id })).grant;
          expect(g.grant.roleKeys).toEqual(["kept"]);
        }

        const other = await createProject(projects, unique("Delete Race"), { orgId: orgB });
        await projects.ok("AddProjectRole", { projectId: other, role: role("r") });
        const [deletion, ...onDeleted] = await Promise.all([
          projects.call("DeleteProject", { id: other }),
          ...users.map((u) => grants.call("CreateUserGrant", { projectId: other, grant: { userId: u, roleKeys: ["r"] } })),
        ]);
        expect(deletion).toMatchObject({ ok: true });
        for (const c of onDeleted) {
          if (c.ok) expect(code(await getGrant((c.message as Msg).details.id))).toBe(Code.NotFound);
          else expect(c.code).toBe(Code.NotFound);
        }
        const left = await grants.ok("SearchUserGrants", { filters: [{ projectId: { projectId: other } }] });
        expect(left.result ?? []).toEqual([]);
      }
    });
  });

  describe("awkward keys and names", () => {
    it("handles keys with quotes, backslashes and slashes on every path, grants included", async () => {
      const id = await createProject(projects, unique("Awkward"), { orgId: orgA });
      const rest = projectClient(server.baseUrl, server.adminToken, "rest");
      const keys = ['we"ird\\key', "a/b", "x%y", "ünï"];
      for (const k of keys) expect((await rest.ok("AddProjectRole", { projectId: id, role: role(k, `name of ${k}`) })).details.id).toBe(k);
      const user = await createMachineUser(server.baseUrl, server.adminToken, `awkward-${counter}`);
      const grant = await createGrant(grants, id, user, keys);
      for (const k of keys) expect((await rest.ok("PatchProjectRole", { projectId: id, key: k, role: { group: "g" } })).details.id).toBe(k);
      const found = await projects.ok("SearchProjectRoles", { projectId: id, sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY", query: { asc: true } });
      expect(found.result.map((r: Msg) => r.role)).toEqual([...keys].sort().map((k) => ({ key: k, displayName: `name of ${k}`, group: "g" })));
      expect((await rest.ok("RemoveProjectRole", { projectId: id, key: keys[0]! })).details.id).toBe(keys[0]);
      expect((await rest.ok("RemoveProjectRole", { projectId: id, key: "a/b" })).details.id).toBe("a/b");
      const left = (await grants.ok("GetUserGrant", { id: grant })).grant;
      expect(left).toMatchObject({ details: { sequence: "3" }, grant: { roleKeys: ["x%y", "ünï"] } });
      expect(await seq(id)).toBe(String(1 + 4 + 4 + 2));
    });

    it("treats names that differ in non-ASCII case as the same name", async () => {
      const org = await createOrg(server.baseUrl, server.adminToken, unique("Unicode Org"));
      await createProject(projects, "Äpfel", { orgId: org });
      expect(await projects.call("CreateProject", { project: { name: "äpfel" }, ctx: { orgId: org } })).toMatchObject({ ok: false, code: Code.AlreadyExists });
      // Whitespace is significant: a trailing blank makes another name.
      expect(await projects.call("CreateProject", { project: { name: "Äpfel " }, ctx: { orgId: org } })).toMatchObject({ ok: true });
    });
  });

  describe("removals", () => {
    it("deletes a project with its roles and every grant on it; its name is free again", async () => {
      const name = unique("Doomed");
      const id = await createProject(projects, name, { orgId: orgB });
      const keep = await createProject(projects, unique("Survivor"), { orgId: orgB });
      await projects.ok("AddProjectRole", { projectId: id, role: role("r") });
      await projects.ok("AddProjectRole", { projectId: keep, role: role("r") });
      const user = await createMachineUser(server.baseUrl, server.adminToken, `doomed-${counter}`);
      const g1 = await createGrant(grants, id, user, ["r"]);
      const g2 = await createGrant(grants, id, await createMachineUser(server.baseUrl, server.adminToken, `doomed-b-${counter}`, orgA), []);
      const kept = await createGrant(grants, keep, user, ["r"]);

      const deleted = await projects.ok("DeleteProject", { id });
      expect(deleted).toEqual({ details: { id, sequence: "3", changeDate: expect.any(String), resourceOwner: orgOwner(orgB) } });
      expect(await projects.call("GetProject", { id })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("DeleteProject", { id })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("SearchProjectRoles", { projectId: id })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(code(await getGrant(g1))).toBe(Code.NotFound);
      expect(code(await getGrant(g2))).toBe(Code.NotFound);
      expect((await grants.ok("GetUserGrant", { id: kept })).grant).toMatchObject({ projectId: keep, grant: { userId: user, roleKeys: ["r"] } });
      expect((await projects.ok("SearchProjects", { filters: [{ inIds: { ids: [id, keep] } }] })).result.map((p: Msg) => p.details.id)).toEqual([keep]);
      // The name is free, and a new project does not inherit roles.
      const again = await createProject(projects, name, { orgId: orgB });
      expect(again).not.toBe(id);
      expect((await projects.ok("SearchProjectRoles", { projectId: again })).result ?? []).toEqual([]);
    });

    it("deleting an organization removes its projects, their roles and grants, and no one else's", async () => {
      const org = await createOrg(server.baseUrl, server.adminToken, unique("Short Lived Org"));
      const doomed = await createProject(projects, "Org Project", { orgId: org });
      const survivor = await createProject(projects, "Org Project", { orgId: orgA });
      await projects.ok("AddProjectRole", { projectId: doomed, role: role("r") });
      await projects.ok("AddProjectRole", { projectId: survivor, role: role("r") });
      // A user of another organization granted on the doomed project, and the org's own user on the survivor.
      const outsider = await createMachineUser(server.baseUrl, server.adminToken, `outsider-${counter}`, orgA);
      const insider = await createMachineUser(server.baseUrl, server.adminToken, `insider-${counter}`, org);
      const onDoomed = await createGrant(grants, doomed, outsider, ["r"]);
      const insiderOnSurvivor = await createGrant(grants, survivor, insider, ["r"]);
      const outsiderOnSurvivor = await createGrant(grants, survivor, outsider, ["r"]);

      await orgClient(server.baseUrl, server.adminToken).ok("DeleteOrganization", { id: org });
      expect(await projects.call("GetProject", { id: doomed })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("SearchProjectRoles", { projectId: doomed })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(code(await getGrant(onDoomed))).toBe(Code.NotFound);
      // The org's user went with it, and so did the user's grants elsewhere.
      expect(code(await getGrant(insiderOnSurvivor))).toBe(Code.NotFound);
      expect((await grants.ok("GetUserGrant", { id: outsiderOnSurvivor })).grant).toMatchObject({
        projectId: survivor,
        grant: { userId: outsider, roleKeys: ["r"] },
      });
      expect((await get(survivor)).details.sequence).toBe("2");
      expect((await projects.ok("SearchProjects", { filters: [{ inIds: { ids: [doomed, survivor] } }] })).result.map((p: Msg) => p.details.id)).toEqual([
        survivor,
      ]);
    });

    it("an organization once deleted is no ctx to create in any more", async () => {
      const org = await createOrg(server.baseUrl, server.adminToken, unique("Gone Org"));
      // Named once, so that a cache of it would be warm.
      await createProject(projects, "Before", { orgId: org });
      await orgClient(server.baseUrl, server.adminToken).ok("DeleteOrganization", { id: org });
      expect(await projects.call("CreateProject", { project: { name: "After" }, ctx: { orgId: org } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await projects.call("SearchProjects", { ctx: { orgId: org } })).toMatchObject({ ok: false, code: Code.NotFound });
    });

    it("deleting a user removes the user's grants and leaves the project and its roles", async () => {
      const id = await createProject(projects, unique("User Removal"), { orgId: orgA });
      await projects.ok("AddProjectRole", { projectId: id, role: role("r") });
      const leaving = await createMachineUser(server.baseUrl, server.adminToken, `leaving-${counter}`, orgB);
      const staying = await createMachineUser(server.baseUrl, server.adminToken, `staying-${counter}`, orgB);
      const gone = await createGrant(grants, id, leaving, ["r"]);
      const kept = await createGrant(grants, id, staying, ["r"]);
      await userClient(server.baseUrl, server.adminToken).ok("DeleteUser", { id: leaving });
      expect(code(await getGrant(gone))).toBe(Code.NotFound);
      expect((await grants.ok("GetUserGrant", { id: kept })).grant.grant).toEqual({ userId: staying, roleKeys: ["r"] });
      expect(await get(id)).toMatchObject({ details: { sequence: "2" }, state: ACTIVE });
      expect((await projects.ok("SearchProjectRoles", { projectId: id })).result.map((r: Msg) => r.role.key)).toEqual(["r"]);
    });
  });
});
