import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import type { CallResult } from "../support/clients.js";
import type { Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { INACTIVE, createOrg, createProject, orgOwner, projectClient, role, type Client } from "./helpers.js";

const OK = "ok";
const DENIED = Code.PermissionDenied;
const NOT_FOUND = Code.NotFound;
type Outcome = typeof OK | Code;

const outcome = (r: CallResult): Outcome => (r.ok ? OK : r.code);

/** Every PlatformProjects RPC in a fixed order, against fresh fixtures of org A. */
const OPERATIONS = [
  "get",
  "searchRoles",
  "patch",
  "addRole",
  "patchRole",
  "removeRole",
  "deactivate",
  "reactivate",
  "delete",
  "createInOrgA",
  "createInDefault",
  "searchOrgA",
] as const;
type Operation = (typeof OPERATIONS)[number];

/** Project permissions per caller kind (issue: PlatformProjects access). */
describe.each(DATABASE_KINDS)("who may do what with projects (%s)", (kind) => {
  let server: TestServer;
  let admin: Client;
  let orgA: string;
  let orgB: string;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let counter = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = projectClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "Access Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "Access Org B");
    other = await server.createInstance("127.0.0.1");
  });
  afterAll(() => server?.close());

  /** An active project with role "r" and an inactive one with role "r", both of org A. */
  async function fixtures() {
    const n = ++counter;
    const active = await createProject(admin, `Active ${n}`, { orgId: orgA });
    const inactive = await createProject(admin, `Inactive ${n}`, { orgId: orgA });
    for (const id of [active, inactive]) await admin.ok("AddProjectRole", { projectId: id, role: role("r") });
    await admin.ok("DeactivateProject", { id: inactive });
    return { active, inactive, n };
  }

  /** Runs every operation once as the caller; outcomes by operation. */
  async function everyOperation(token: string, baseUrl = server.baseUrl): Promise<Record<Operation, Outcome>> {
    const { active, inactive, n } = await fixtures();
    const c = projectClient(baseUrl, token);
    const requests: Record<Operation, [string, JsonObject]> = {
      get: ["GetProject", { id: active }],
      searchRoles: ["SearchProjectRoles", { projectId: active }],
      patch: ["PatchProject", { id: active, project: { name: `Patched ${n}` } }],
      addRole: ["AddProjectRole", { projectId: active, role: role("added") }],
      patchRole: ["PatchProjectRole", { projectId: active, key: "r", role: { displayName: "changed" } }],
      removeRole: ["RemoveProjectRole", { projectId: active, key: "r" }],
      deactivate: ["DeactivateProject", { id: active }],
      reactivate: ["ReactivateProject", { id: inactive }],
      delete: ["DeleteProject", { id: inactive }],
      createInOrgA: ["CreateProject", { project: { name: `Created ${n}` }, ctx: { orgId: orgA } }],
      createInDefault: ["CreateProject", { project: { name: `Created ${n}` } }],
      searchOrgA: ["SearchProjects", { ctx: { orgId: orgA } }],
    };
    const out = {} as Record<Operation, Outcome>;
    for (const op of OPERATIONS) out[op] = outcome(await c.call(requests[op][0], requests[op][1], token));
    return out;
  }

  const table = (entries: Partial<Record<Operation, Outcome>>, rest: Outcome) =>
    Object.fromEntries(OPERATIONS.map((op) => [op, entries[op] ?? rest])) as Record<Operation, Outcome>;
  const READS: Operation[] = ["get", "searchRoles", "searchOrgA"];

  it("IAM_OWNER: everything in its instance", async () => {
    const iam = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
    expect(await everyOperation(iam.token)).toEqual(table({}, OK));
  });

  it("ORG_OWNER: everything in its organization, nothing in the default organization", async () => {
    const owner = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
    expect(await everyOperation(owner.token)).toEqual(table({ createInDefault: DENIED }, OK));
  });

  it("ORG_OWNER_VIEWER and IAM_OWNER_VIEWER: reads only", async () => {
    const viewer = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }] });
    expect(await everyOperation(viewer.token)).toEqual(table(Object.fromEntries(READS.map((op) => [op, OK])), DENIED));
    const instViewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
    expect(await everyOperation(instViewer.token)).toEqual(table(Object.fromEntries(READS.map((op) => [op, OK])), DENIED));
  });

  it("ORG_OWNER of another organization and a plain user: PermissionDenied everywhere here", async () => {
    const ownerB = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }] });
    expect(await everyOperation(ownerB.token)).toEqual(table({}, DENIED));
    const plain = await server.createUser({});
    expect(await everyOperation(plain.token)).toEqual(table({}, DENIED));
  });

  it("another instance's admin: our projects and organizations do not exist", async () => {
    const out = await everyOperation(other.adminToken, other.baseUrl);
    // Creating in its own default organization is its own business.
    expect(out).toEqual(table({ createInDefault: OK }, NOT_FOUND));
    const theirs = projectClient(other.baseUrl, other.adminToken);
    const found = await theirs.ok("SearchProjects", {});
    // Its own project and its console's, both in its default organization.
    expect(found.result.map((p: Msg) => p.details.resourceOwner)).toEqual([orgOwner(other.orgId), orgOwner(other.orgId)]);
  });

  it("without a token: Unauthenticated", async () => {
    const out = await everyOperation("");
    expect(out).toEqual(table({}, Code.Unauthenticated));
  });

  it("unknown ids: NotFound to who may act somewhere, PermissionDenied to others; a foreign ctx is NotFound", async () => {
    const { active } = await fixtures();
    const ownerA = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
    const ownerB = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }] });
    const plain = await server.createUser({});
    for (const token of [server.adminToken, ownerA.token, ownerB.token]) {
      expect(outcome(await admin.call("GetProject", { id: "no-such-project" }, token))).toBe(NOT_FOUND);
      expect(outcome(await admin.call("AddProjectRole", { projectId: "no-such-project", role: role("x") }, token))).toBe(NOT_FOUND);
    }
    expect(outcome(await admin.call("GetProject", { id: "no-such-project" }, plain.token))).toBe(DENIED);
    // ORG_OWNER of A naming B (where it has no permission) or naming a mismatching org.
    expect(outcome(await admin.call("GetProject", { id: active, ctx: { orgId: orgB } }, ownerA.token))).toBe(NOT_FOUND);
    expect(outcome(await admin.call("PatchProject", { id: active, project: { name: "x" }, ctx: { orgId: orgB } }, ownerA.token))).toBe(NOT_FOUND);
    expect(outcome(await admin.call("GetProject", { id: active, ctx: { orgId: orgA } }, ownerA.token))).toBe(OK);
    expect(outcome(await admin.call("GetProject", { id: active, ctx: { orgId: orgB } }, ownerB.token))).toBe(NOT_FOUND);
    expect(outcome(await admin.call("GetProject", { id: active, ctx: { orgId: orgB } }, plain.token))).toBe(DENIED);
    // Creating in another organization by ctx.
    expect(outcome(await admin.call("CreateProject", { project: { name: "Sneaky" }, ctx: { orgId: orgB } }, ownerA.token))).toBe(DENIED);
    expect(outcome(await admin.call("CreateProject", { project: { name: "Sneaky" }, ctx: { instanceId: server.instanceId } }, ownerA.token))).toBe(DENIED);
    expect((await admin.ok("SearchProjects", { filters: [{ name: { name: "Sneaky" } }] })).result ?? []).toEqual([]);
  });

  it("what an ORG_OWNER did is visible as done, and nothing it was refused happened", async () => {
    const ownerA = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
    const viewer = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }] });
    const a = projectClient(server.baseUrl, ownerA.token);
    const made = await a.ok("CreateProject", { project: { name: "Owned By A", projectRoleAssertion: true }, ctx: { orgId: orgA } });
    expect(made.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(orgA) });
    const id = made.details.id as string;
    expect(outcome(await a.call("PatchProject", { id, project: { name: "Owned By A too" } }, viewer.token))).toBe(DENIED);
    expect(outcome(await a.call("DeactivateProject", { id }, viewer.token))).toBe(DENIED);
    expect(outcome(await a.call("DeleteProject", { id }, viewer.token))).toBe(DENIED);
    expect((await a.ok("GetProject", { id }, viewer.token)).project).toEqual({
      details: { id, sequence: "1", changeDate: made.details.changeDate, resourceOwner: orgOwner(orgA) },
      project: { name: "Owned By A", projectRoleAssertion: true },
      state: "PROJECT_STATE_ACTIVE",
    });
    await a.ok("DeactivateProject", { id });
    expect((await admin.ok("GetProject", { id })).project).toMatchObject({ state: INACTIVE, details: { sequence: "2" } });
  });

  describe("feature flag multitenancy_resources_api", () => {
    it("off: every RPC is FailedPrecondition in that instance only; on again: served", async () => {
      const theirs = projectClient(other.baseUrl, other.adminToken);
      const theirsRest = projectClient(other.baseUrl, other.adminToken, "rest");
      const id = await createProject(theirs, "Flagged");
      await theirs.ok("AddProjectRole", { projectId: id, role: role("r") });
      const requests: [string, JsonObject][] = [
        ["CreateProject", { project: { name: "Flag Off" } }],
        ["GetProject", { id }],
        ["SearchProjects", {}],
        ["PatchProject", { id, project: { name: "renamed" } }],
        ["DeactivateProject", { id }],
        ["ReactivateProject", { id }],
        ["AddProjectRole", { projectId: id, role: role("s") }],
        ["PatchProjectRole", { projectId: id, key: "r", role: { displayName: "x" } }],
        ["RemoveProjectRole", { projectId: id, key: "r" }],
        ["SearchProjectRoles", { projectId: id }],
        ["DeleteProject", { id }],
      ];
      await setInstanceFlag(server, other.instanceId, "multitenancy_resources_api", false);
      try {
        for (const [method, req] of requests) {
          for (const client of [theirs, theirsRest]) {
            const r = await client.call(method, req);
            expect(r, method).toMatchObject({ ok: false, code: Code.FailedPrecondition });
            expect((r as { message: string }).message, method).toContain("multitenancy_resources_api");
            if (r.httpStatus !== undefined) expect(r.httpStatus, method).toBe(400);
          }
        }
        // The other instance is not affected.
        expect(outcome(await admin.call("SearchProjects", {}))).toBe(OK);
      } finally {
        await setInstanceFlag(server, other.instanceId, "multitenancy_resources_api", true);
      }
      // Nothing happened while it was off.
      expect((await theirs.ok("GetProject", { id })).project).toMatchObject({
        project: { name: "Flagged" },
        details: { sequence: "2" },
        state: "PROJECT_STATE_ACTIVE",
      });
      expect((await theirs.ok("SearchProjects", { filters: [{ name: { name: "Flag Off" } }] })).result ?? []).toEqual([]);
      await setInstanceFlag(server, other.instanceId, "multitenancy_resources_api", undefined);
      expect(outcome(await theirs.call("GetProject", { id }))).toBe(OK);
    });
  });
});
