import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { clients, createGrant, createMachineUser, createOrg, createProject, createProjectGrant, orgOwner, type Client } from "./helpers.js";

/*
 * Project grants (PlatformGrants): an organization gives roles of its project to another
 * organization of the instance, whose owners give them to their own users. Black-box, over
 * every protocol, with who may do what: the granted organization reads the project and its
 * grant and makes user grants of the grant's roles, nothing else; anyone else sees nothing.
 */

type Step = { result: CallResult; status: number };

const ids = (m: Msg): string[] => (m.result ?? []).map((r: Msg) => r.details.id);

describe.each(DATABASE_KINDS)("project grants (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  const ownerOf = async (orgId: string) => (await server.createUser({ roles: [{ context: "org", contextId: orgId, roles: ["ORG_OWNER"] }] })).token;

  /** The same scenario once per protocol, each on its own organizations, project and users. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const setup = clients(server.baseUrl, server.adminToken);
    const under = clients(server.baseUrl, server.adminToken, protocol);
    const orgA = await createOrg(setup, `pg${t} Owner`);
    const orgB = await createOrg(setup, `pg${t} Grantee`);
    const orgC = await createOrg(setup, `pg${t} Other`);
    const project = await createProject(setup, orgA, ["r1", "r2", "r3"], `pg${t} Project`);
    const userB = await createMachineUser(setup, orgB, `pg${t}-b1`);
    const userB2 = await createMachineUser(setup, orgB, `pg${t}-b2`);
    const userB3 = await createMachineUser(setup, orgB, `pg${t}-b3`);
    const userC = await createMachineUser(setup, orgC, `pg${t}-c1`);
    const ownerB = await ownerOf(orgB);
    const ownerC = await ownerOf(orgC);

    const steps: Record<string, Step> = {};
    const run = async (step: string, status: number, client: Client, method: string, req: JsonObject, token: string = server.adminToken) => {
      const result = await client.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const g = (step: string, status: number, method: string, req: JsonObject, token?: string) => run(step, status, under.grants, method, req, token);
    const p = (step: string, status: number, method: string, req: JsonObject, token?: string) => run(step, status, under.projects, method, req, token);

    const created = okMessage(await g("create", 201, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgB, roleKeys: ["r2", "r1"] } }));
    const id: string = created.details.id;
    await g("createAgain", 409, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgB, roleKeys: [] } });
    await g("createOwnOrg", 400, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgA, roleKeys: [] } });
    await g("createUnknownOrg", 404, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: "no-such-org", roleKeys: [] } });
    await g("createUnknownRole", 400, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgC, roleKeys: ["r1", "nope"] } });
    await g("createUnknownProject", 404, "CreateProjectGrant", { projectId: "no-such-project", grant: { grantedOrgId: orgC, roleKeys: [] } });
    await g("createDuplicateKeys", 400, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgC, roleKeys: ["r1", "r1"] } });
    await g("createByGrantee", 403, "CreateProjectGrant", { projectId: project, grant: { grantedOrgId: orgC, roleKeys: [] } }, ownerB);

    await g("get", 200, "GetProjectGrant", { id });
    await g("getByGrantee", 200, "GetProjectGrant", { id }, ownerB);
    await g("getByGranteeInItsCtx", 200, "GetProjectGrant", { id, ctx: { orgId: orgB } }, ownerB);
    await g("getByOther", 403, "GetProjectGrant", { id }, ownerC);
    await g("getInOtherCtx", 404, "GetProjectGrant", { id, ctx: { orgId: orgC } });
    await g("getMissing", 404, "GetProjectGrant", { id: "no-such-grant" });

    await p("projectByGrantee", 200, "GetProject", { id: project }, ownerB);
    await p("projectByGranteeInItsCtx", 200, "GetProject", { id: project, ctx: { orgId: orgB } }, ownerB);
    await p("projectByOther", 403, "GetProject", { id: project }, ownerC);
    await p("projectByOtherInItsCtx", 404, "GetProject", { id: project, ctx: { orgId: orgC } }, ownerC);
    await p("patchProjectByGrantee", 403, "PatchProject", { id: project, project: { name: `pg${t} Renamed` } }, ownerB);
    await p("patchProjectByGranteeInItsCtx", 404, "PatchProject", { id: project, project: { name: `pg${t} Renamed` }, ctx: { orgId: orgB } }, ownerB);
    await p("rolesByGrantee", 403, "AddProjectRole", { projectId: project, role: { key: "r9", displayName: "R9" } }, ownerB);
    await p("searchProjectsByGrantee", 200, "SearchProjects", {}, ownerB);
    await p("searchProjectsByOther", 200, "SearchProjects", {}, ownerC);

    const userGrant = okMessage(
      await g("userGrantByGrantee", 201, "CreateUserGrant", { projectId: project, grant: { userId: userB, roleKeys: ["r1"] }, ctx: { orgId: orgB } }, ownerB),
    );
    const second = await g("userGrantByGranteeNoCtx", 201, "CreateUserGrant", { projectId: project, grant: { userId: userB2, roleKeys: ["r2"] } }, ownerB);
    await g(
      "userGrantUngrantedRole",
      400,
      "CreateUserGrant",
      { projectId: project, grant: { userId: userB3, roleKeys: ["r3"] }, ctx: { orgId: orgB } },
      ownerB,
    );
    await g("userGrantOtherOrgsUser", 404, "CreateUserGrant", { projectId: project, grant: { userId: userC, roleKeys: [] }, ctx: { orgId: orgB } }, ownerB);
    await g("userGrantByOther", 404, "CreateUserGrant", { projectId: project, grant: { userId: userC, roleKeys: [] }, ctx: { orgId: orgC } }, ownerC);
    await g(
      "userGrantByGranteeInOwnerCtx",
      403,
      "CreateUserGrant",
      { projectId: project, grant: { userId: userB3, roleKeys: [] }, ctx: { orgId: orgA } },
      ownerB,
    );
    const userGrantId: string = userGrant.details.id;
    await g("getUserGrantByGrantee", 200, "GetUserGrant", { id: userGrantId }, ownerB);
    await g("patchUserGrantUngranted", 400, "PatchUserGrant", { id: userGrantId, grant: { roleKeys: ["r1", "r3"] } }, ownerB);
    await g("patchUserGrantByGrantee", 200, "PatchUserGrant", { id: userGrantId, grant: { roleKeys: ["r1", "r2"] } }, ownerB);

    await g("patch", 200, "PatchProjectGrant", { id, grant: { roleKeys: ["r2"] } });
    await g("patchSame", 200, "PatchProjectGrant", { id, grant: { roleKeys: ["r2", "r2"].slice(1) } });
    await g("patchUnknown", 400, "PatchProjectGrant", { id, grant: { roleKeys: ["ghost"] } });
    await g("patchByGrantee", 403, "PatchProjectGrant", { id, grant: { roleKeys: ["r1", "r2"] } }, ownerB);
    await g("userGrantAfterPatch", 200, "GetUserGrant", { id: userGrantId });

    await g("deactivate", 200, "DeactivateProjectGrant", { id });
    await g("deactivateAgain", 400, "DeactivateProjectGrant", { id });
    await g("getInactive", 200, "GetProjectGrant", { id });
    await g("userGrantWhileInactive", 400, "CreateUserGrant", { projectId: project, grant: { userId: userB3, roleKeys: [] }, ctx: { orgId: orgB } }, ownerB);
    await g("deactivateByGrantee", 403, "ReactivateProjectGrant", { id }, ownerB);
    await g("reactivate", 200, "ReactivateProjectGrant", { id });
    await g("reactivateAgain", 400, "ReactivateProjectGrant", { id });

    await g("searchProject", 200, "SearchProjectGrants", { filters: [{ projectId: { projectId: project } }] });
    await g("searchGrantedOrg", 200, "SearchProjectGrants", { filters: [{ grantedOrgId: { grantedOrgId: orgC } }] });
    await g("searchRole", 200, "SearchProjectGrants", { filters: [{ projectId: { projectId: project } }, { roleKey: { roleKey: "r2" } }] });
    await g("searchOtherRole", 200, "SearchProjectGrants", { filters: [{ projectId: { projectId: project } }, { roleKey: { roleKey: "r1" } }] });
    await g("searchByGrantee", 200, "SearchProjectGrants", { filters: [{ projectId: { projectId: project } }] }, ownerB);
    await g("searchByOther", 200, "SearchProjectGrants", { filters: [{ projectId: { projectId: project } }] }, ownerC);
    await g("searchLimit", 400, "SearchProjectGrants", { query: { limit: 1001 } });
    await g("searchUserGrantsByGrantee", 200, "SearchUserGrants", { filters: [{ projectId: { projectId: project } }] }, ownerB);

    await p("removeRole", 200, "RemoveProjectRole", { projectId: project, key: "r2" });
    await g("afterRemoveRole", 200, "GetProjectGrant", { id });

    await g("delete", 200, "DeleteProjectGrant", { id });
    await g("getDeleted", 404, "GetProjectGrant", { id });
    await g("userGrantAfterDelete", 404, "GetUserGrant", { id: userGrantId });
    await g("deleteAgain", 404, "DeleteProjectGrant", { id });
    await p("projectByGranteeAfterDelete", 403, "GetProject", { id: project }, ownerB);
    await g("unauthenticated", 401, "SearchProjectGrants", {}, "");
    const secondId: string = okMessage(second).details.id;
    return { steps, ids: { orgA, orgB, orgC, project, userB, userB2, userB3, userC, grant: id, userGrant: userGrantId, secondUserGrant: secondId } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: s, ids: n } = byProtocol.get("grpc")!;
    const r = (step: string) => s[step]!.result;
    const msg = (step: string): Msg => okMessage(r(step));
    const code = (step: string, expected: Code) => expect(r(step), step).toMatchObject({ ok: false, code: expected });
    const owner = orgOwner(n.orgA);

    expect(msg("create")).toEqual({ details: { id: n.grant, sequence: "1", changeDate: expect.any(String), resourceOwner: owner } });
    code("createAgain", Code.AlreadyExists);
    code("createOwnOrg", Code.InvalidArgument);
    code("createUnknownOrg", Code.NotFound);
    code("createUnknownRole", Code.FailedPrecondition);
    expect((r("createUnknownRole") as { message: string }).message).toContain('"nope"');
    code("createUnknownProject", Code.NotFound);
    code("createDuplicateKeys", Code.InvalidArgument);
    code("createByGrantee", Code.PermissionDenied);

    const view = (sequence: string, roleKeys: string[] | undefined, state = "PROJECT_GRANT_STATE_ACTIVE") => ({
      details: { id: n.grant, sequence, changeDate: expect.any(String), resourceOwner: owner },
      projectId: n.project,
      grantedOrgId: n.orgB,
      ...(roleKeys && { roleKeys }),
      state,
    });
    expect(msg("get")).toEqual({ grant: view("1", ["r1", "r2"]) });
    expect(msg("getByGrantee")).toEqual(msg("get"));
    expect(msg("getByGranteeInItsCtx")).toEqual(msg("get"));
    code("getByOther", Code.PermissionDenied);
    code("getInOtherCtx", Code.NotFound);
    code("getMissing", Code.NotFound);

    expect(msg("projectByGrantee").project.details.id).toBe(n.project);
    expect(msg("projectByGranteeInItsCtx")).toEqual(msg("projectByGrantee"));
    code("projectByOther", Code.PermissionDenied);
    code("projectByOtherInItsCtx", Code.NotFound);
    code("patchProjectByGrantee", Code.PermissionDenied);
    code("patchProjectByGranteeInItsCtx", Code.NotFound);
    code("rolesByGrantee", Code.PermissionDenied);
    expect(ids(msg("searchProjectsByGrantee"))).toContain(n.project);
    expect(ids(msg("searchProjectsByOther"))).not.toContain(n.project);

    // The granted organization's user grants are its own, made under the grant.
    expect(msg("userGrantByGrantee").details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(n.orgB) });
    expect(msg("userGrantByGranteeNoCtx").details).toMatchObject({ resourceOwner: orgOwner(n.orgB) });
    code("userGrantUngrantedRole", Code.FailedPrecondition);
    expect((r("userGrantUngrantedRole") as { message: string }).message).toContain('"r3"');
    code("userGrantOtherOrgsUser", Code.NotFound);
    code("userGrantByOther", Code.NotFound);
    code("userGrantByGranteeInOwnerCtx", Code.PermissionDenied);
    expect(msg("getUserGrantByGrantee").grant).toMatchObject({
      projectId: n.project,
      grant: { userId: n.userB, roleKeys: ["r1"] },
      userOrgId: n.orgB,
      projectGrantId: n.grant,
      details: { resourceOwner: orgOwner(n.orgB) },
    });
    code("patchUserGrantUngranted", Code.FailedPrecondition);
    expect(msg("patchUserGrantByGrantee").details.sequence).toBe("2");

    expect(msg("patch").details).toMatchObject({ id: n.grant, sequence: "2" });
    expect(msg("patchSame")).toEqual(msg("patch"));
    code("patchUnknown", Code.FailedPrecondition);
    code("patchByGrantee", Code.PermissionDenied);
    // r1 left the grant, and with it the user grant made under it, in the same transaction.
    expect(msg("userGrantAfterPatch").grant).toMatchObject({ grant: { roleKeys: ["r2"] }, details: { sequence: "3" } });

    expect(msg("deactivate").details.sequence).toBe("3");
    code("deactivateAgain", Code.FailedPrecondition);
    expect(msg("getInactive")).toEqual({ grant: view("3", ["r2"], "PROJECT_GRANT_STATE_INACTIVE") });
    code("userGrantWhileInactive", Code.FailedPrecondition);
    code("deactivateByGrantee", Code.PermissionDenied);
    expect(msg("reactivate").details.sequence).toBe("4");
    code("reactivateAgain", Code.FailedPrecondition);

    expect(ids(msg("searchProject"))).toEqual([n.grant]);
    expect(msg("searchProject").result[0]).toEqual(view("4", ["r2"]));
    expect(msg("searchProject").details).toMatchObject({ totalResult: "1", endOfList: true });
    expect(ids(msg("searchGrantedOrg"))).toEqual([]);
    expect(ids(msg("searchRole"))).toEqual([n.grant]);
    expect(ids(msg("searchOtherRole"))).toEqual([]);
    expect(ids(msg("searchByGrantee"))).toEqual([n.grant]);
    expect(ids(msg("searchByOther"))).toEqual([]);
    code("searchLimit", Code.InvalidArgument);
    expect(ids(msg("searchUserGrantsByGrantee"))).toHaveLength(2);

    // A role removed from the project leaves its grants, each with an event.
    expect(msg("afterRemoveRole")).toEqual({ grant: view("5", undefined) });
    expect(msg("delete").details).toMatchObject({ id: n.grant, sequence: "6", resourceOwner: owner });
    code("getDeleted", Code.NotFound);
    code("userGrantAfterDelete", Code.NotFound);
    code("deleteAgain", Code.NotFound);
    code("projectByGranteeAfterDelete", Code.PermissionDenied);
    code("unauthenticated", Code.Unauthenticated);

    const reference = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, comparable(v.result, n, { prefix: "pg" })]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(s));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, theirs, { prefix: "pg" }), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("lets a PROJECT_GRANT_OWNER manage the user grants under its grant and nothing else", async () => {
    const c = clients(server.baseUrl, server.adminToken);
    const orgA = await createOrg(c);
    const orgB = await createOrg(c);
    const project = await createProject(c, orgA, ["r1", "r2"]);
    const other = await createProject(c, orgA, ["r1"]);
    const grant = await createProjectGrant(c, project, orgB, ["r1"]);
    await createProjectGrant(c, other, orgB, ["r1"]);
    const ownerB = await ownerOf(orgB);
    const manager = await server.createUser({ orgId: orgB });
    const userB = await createMachineUser(c, orgB);
    const userB2 = await createMachineUser(c, orgB);
    const userA = await createMachineUser(c, orgA);

    // The granted organization's owners make its members; only users of that organization.
    const ctx = { projectGrantId: grant };
    const roles = await c.memberships.ok("ListAvailableRoles", { ctx }, ownerB);
    expect(roles.roles.map((role: Msg) => role.name)).toEqual(["PROJECT_GRANT_OWNER"]);
    expect(roles.roles[0].permissions).toEqual(["user.grant.read", "user.grant.write", "user.grant.delete"]);
    const made = await c.memberships.ok("CreateMembership", { membership: { userId: manager.userId, roles: ["PROJECT_GRANT_OWNER"] }, ctx }, ownerB);
    expect(made.details).toMatchObject({ id: manager.userId, resourceOwner: { type: "OWNER_TYPE_PROJECT_GRANT", id: grant } });
    expect(await c.memberships.call("CreateMembership", { membership: { userId: userA, roles: ["PROJECT_GRANT_OWNER"] }, ctx }, ownerB)).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
    });
    expect(await c.memberships.call("CreateMembership", { membership: { userId: userB, roles: ["ORG_OWNER"] }, ctx }, ownerB)).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    expect(await c.memberships.call("CreateMembership", { membership: { userId: userB, roles: ["PROJECT_GRANT_OWNER"] }, ctx }, manager.token)).toMatchObject({
      ok: false,
      code: Code.PermissionDenied,
    });
    expect(await c.memberships.call("ListAvailableRoles", { ctx: { projectGrantId: "no-such-grant" } }, ownerB)).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    const listed = await c.memberships.ok("SearchMemberships", { ctx }, ownerB);
    expect(listed.result.map((m: Msg) => [m.userId, m.context, m.roles])).toEqual([
      [manager.userId, { type: "OWNER_TYPE_PROJECT_GRANT", id: grant }, ["PROJECT_GRANT_OWNER"]],
    ]);
    expect((await c.memberships.ok("SearchMemberships", { ctx: { orgId: orgB } }, ownerB)).result.map((m: Msg) => m.userId)).toContain(manager.userId);
    const mine = await c.memberships.ok("ListMyPermissions", { ctx }, manager.token);
    expect(mine.permissions).toEqual(["user.grant.delete", "user.grant.read", "user.grant.write"]);

    // It makes, reads, changes and removes user grants under its grant, with its roles only.
    const byManager = await c.grants.ok(
      "CreateUserGrant",
      { projectId: project, grant: { userId: userB, roleKeys: ["r1"] }, ctx: { orgId: orgB } },
      manager.token,
    );
    const id: string = byManager.details.id;
    expect(await c.grants.call("CreateUserGrant", { projectId: project, grant: { userId: userB2, roleKeys: ["r2"] } }, manager.token)).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
    });
    expect((await c.grants.ok("GetUserGrant", { id }, manager.token)).grant.projectGrantId).toBe(grant);
    expect((await c.grants.ok("PatchUserGrant", { id, grant: { roleKeys: [] } }, manager.token)).details.sequence).toBe("2");
    const byOwner = await createGrant(c, project, userB2, ["r2"]);
    expect(ids(await c.grants.ok("SearchUserGrants", {}, manager.token))).toEqual([id]);
    // Not the grants its project's organization made, not another project's grant, not the project itself.
    expect(await c.grants.call("GetUserGrant", { id: byOwner }, manager.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(await c.grants.call("CreateUserGrant", { projectId: other, grant: { userId: userB2, roleKeys: [] } }, manager.token)).toMatchObject({
      ok: false,
      code: Code.PermissionDenied,
    });
    expect(await c.projects.call("GetProject", { id: project }, manager.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(await c.grants.call("GetProjectGrant", { id: grant }, manager.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(await c.users.call("GetUser", { id: userB }, manager.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect((await c.grants.ok("DeleteUserGrant", { id }, manager.token)).details.sequence).toBe("3");

    // The grant's removal takes its memberships: the manager holds nothing any more.
    await c.grants.ok("DeleteProjectGrant", { id: grant });
    expect((await c.memberships.ok("SearchMemberships", { filters: [{ user: { userId: manager.userId } }] })).result ?? []).toEqual([]);
    expect(await c.grants.call("SearchUserGrants", {}, manager.token)).toMatchObject({ ok: false, code: Code.PermissionDenied });
  });

  it("keeps grants inside their instance and removes them with either organization or the project", async () => {
    const c = clients(server.baseUrl, server.adminToken);
    // Reached at 127.0.0.1 (the test server's own address): no other test of this file makes an instance.
    const other = await server.createInstance("127.0.0.1");
    const theirs = clients(other.baseUrl, other.adminToken);
    const orgA = await createOrg(c);
    const orgB = await createOrg(c);
    const orgC = await createOrg(c);
    const project = await createProject(c, orgA, ["r1"]);
    const grant = await createProjectGrant(c, project, orgB, ["r1"]);
    const userB = await createMachineUser(c, orgB);
    const userGrant = (await c.grants.ok("CreateUserGrant", { projectId: project, grant: { userId: userB, roleKeys: ["r1"] }, ctx: { orgId: orgB } })).details
      .id as string;

    // Another instance's administrator finds nothing, and cannot grant to this instance's organizations.
    expect(await theirs.grants.call("GetProjectGrant", { id: grant })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await theirs.grants.call("DeleteProjectGrant", { id: grant })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(ids(await theirs.grants.ok("SearchProjectGrants", {}))).toEqual([]);
    const theirProject = await createProject(theirs, other.orgId, ["r1"]);
    expect(await theirs.grants.call("CreateProjectGrant", { projectId: theirProject, grant: { grantedOrgId: orgC, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });
    expect(await c.grants.call("CreateProjectGrant", { projectId: project, grant: { grantedOrgId: other.orgId, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.NotFound,
    });

    // The granted organization's removal takes the grant and what was made under it.
    await c.orgs.ok("DeleteOrganization", { id: orgB });
    expect(await c.grants.call("GetProjectGrant", { id: grant })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await c.grants.call("GetUserGrant", { id: userGrant })).toMatchObject({ ok: false, code: Code.NotFound });
    // The project's removal takes its grants.
    const toC = await createProjectGrant(c, project, orgC, ["r1"]);
    await c.projects.ok("DeleteProject", { id: project });
    expect(await c.grants.call("GetProjectGrant", { id: toC })).toMatchObject({ ok: false, code: Code.NotFound });
    // A deactivated organization is granted nothing.
    const next = await createProject(c, orgA, ["r1"]);
    await c.orgs.ok("DeactivateOrganization", { id: orgC });
    expect(await c.grants.call("CreateProjectGrant", { projectId: next, grant: { grantedOrgId: orgC, roleKeys: [] } })).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
    });
  });

  it("answers each kind of caller as the role table says (the authorization matrix of project grants)", async () => {
    const c = clients(server.baseUrl, server.adminToken);
    const orgA = await createOrg(c);
    const orgB = await createOrg(c);
    const project = await createProject(c, orgA, ["r1", "r2"]);
    const user = (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => server.createUser({ roles }).then((u) => u.token);
    const tokens = {
      iam: await user([{ context: "instance", roles: ["IAM_OWNER"] }]),
      iamViewer: await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]),
      ownerA: await user([{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }]),
      viewerA: await user([{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }]),
      ownerB: await user([{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }]),
      viewerB: await user([{ context: "org", contextId: orgB, roles: ["ORG_OWNER_VIEWER"] }]),
      ownerC: await ownerOf(await createOrg(c)),
      plain: await user([]),
    };
    type Who = keyof typeof tokens;
    const WHO = Object.keys(tokens) as Who[];
    const [OK, D, NF, FP] = ["ok", "denied", "notfound", "failed"] as const;
    const outcome = (r: CallResult) =>
      r.ok ? OK : r.code === Code.PermissionDenied ? D : r.code === Code.NotFound ? NF : r.code === Code.FailedPrecondition ? FP : `code ${r.code}`;
    /** Each row's request is made afresh per caller (a new grant where the call changes or removes it). */
    const fresh = async () => {
      const other = await createOrg(c);
      return { id: await createProjectGrant(c, project, other, ["r1"]), org: other };
    };
    const grantToB = await createProjectGrant(c, project, orgB, ["r1"]);
    const rows: [string, (who: Who) => Promise<CallResult>, Record<Who, string>][] = [
      [
        "CreateProjectGrant",
        async (who) => c.grants.call("CreateProjectGrant", { projectId: project, grant: { grantedOrgId: await createOrg(c), roleKeys: ["r1"] } }, tokens[who]),
        { iam: OK, iamViewer: D, ownerA: OK, viewerA: D, ownerB: D, viewerB: D, ownerC: D, plain: D },
      ],
      [
        "GetProjectGrant",
        (who) => c.grants.call("GetProjectGrant", { id: grantToB }, tokens[who]),
        { iam: OK, iamViewer: OK, ownerA: OK, viewerA: OK, ownerB: OK, viewerB: OK, ownerC: D, plain: D },
      ],
      [
        "PatchProjectGrant",
        async (who) => c.grants.call("PatchProjectGrant", { id: (await fresh()).id, grant: { roleKeys: ["r1", "r2"] } }, tokens[who]),
        { iam: OK, iamViewer: D, ownerA: OK, viewerA: D, ownerB: D, viewerB: D, ownerC: D, plain: D },
      ],
      [
        "DeactivateProjectGrant",
        async (who) => c.grants.call("DeactivateProjectGrant", { id: (await fresh()).id }, tokens[who]),
        { iam: OK, iamViewer: D, ownerA: OK, viewerA: D, ownerB: D, viewerB: D, ownerC: D, plain: D },
      ],
      [
        "DeleteProjectGrant",
        async (who) => c.grants.call("DeleteProjectGrant", { id: (await fresh()).id }, tokens[who]),
        { iam: OK, iamViewer: D, ownerA: OK, viewerA: D, ownerB: D, viewerB: D, ownerC: D, plain: D },
      ],
      [
        "SearchProjectGrants shows the grant to B",
        async (who) => {
          const r = await c.grants.call("SearchProjectGrants", { filters: [{ projectId: { projectId: project } }] }, tokens[who]);
          return r.ok && !ids((r as { message: Msg }).message).includes(grantToB) ? { ok: false, code: Code.NotFound, message: "not shown" } : r;
        },
        { iam: OK, iamViewer: OK, ownerA: OK, viewerA: OK, ownerB: OK, viewerB: OK, ownerC: NF, plain: D },
      ],
      [
        "GetProject",
        (who) => c.projects.call("GetProject", { id: project }, tokens[who]),
        { iam: OK, iamViewer: OK, ownerA: OK, viewerA: OK, ownerB: OK, viewerB: OK, ownerC: D, plain: D },
      ],
      [
        "CreateUserGrant in B's ctx",
        async (who) =>
          c.grants.call(
            "CreateUserGrant",
            { projectId: project, grant: { userId: await createMachineUser(c, orgB), roleKeys: ["r1"] }, ctx: { orgId: orgB } },
            tokens[who],
          ),
        // A's owner sees the project but may not act in B; to C, which sees neither, it is as if the project were not granted to B.
        { iam: OK, iamViewer: D, ownerA: D, viewerA: D, ownerB: OK, viewerB: D, ownerC: NF, plain: D },
      ],
    ];
    const got: Record<string, Record<string, string>> = {};
    const want: Record<string, Record<string, string>> = {};
    for (const [name, call, expected] of rows) {
      want[name] = expected;
      got[name] = {};
      for (const who of WHO) got[name]![who] = outcome(await call(who));
    }
    expect(got).toEqual(want);
  });

  it("answers REST calls on the documented paths with rpcStatus errors", async () => {
    const c = clients(server.baseUrl, server.adminToken);
    const orgA = await createOrg(c);
    const orgB = await createOrg(c);
    const project = await createProject(c, orgA, ["a", "b"]);
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/resources/v3alpha${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", ...init.headers },
      });
    const created = await rest(`/projects/${project}/grants`, { method: "POST", body: JSON.stringify({ grantedOrgId: orgB, roleKeys: ["b", "a"] }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as Msg).details.id as string;
    const again = await rest(`/projects/${project}/grants`, { method: "POST", body: JSON.stringify({ grantedOrgId: orgB }) });
    expect(again.status).toBe(409);
    expect(Object.keys((await again.json()) as JsonObject).sort()).toEqual(["code", "details", "message"]);
    const got = await rest(`/project_grants/${id}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as Msg).grant).toMatchObject({
      projectId: project,
      grantedOrgId: orgB,
      roleKeys: ["a", "b"],
      state: "PROJECT_GRANT_STATE_ACTIVE",
    });
    expect((await rest(`/project_grants/${id}`, { method: "PATCH", body: JSON.stringify({ roleKeys: ["a"] }) })).status).toBe(200);
    expect((await rest(`/project_grants/${id}/_deactivate`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/project_grants/${id}/_deactivate`, { method: "POST" })).status).toBe(400);
    expect((await rest(`/project_grants/${id}/_reactivate`, { method: "POST" })).status).toBe(200);
    const searched = await rest(`/project_grants/_search?query.limit=5&sortingColumn=PROJECT_GRANT_FIELD_NAME_CHANGE_DATE`, {
      method: "POST",
      body: JSON.stringify([{ grantedOrgId: { grantedOrgId: orgB } }, { roleKey: { roleKey: "a" } }]),
    });
    expect(searched.status).toBe(200);
    expect(await searched.json()).toMatchObject({
      details: { totalResult: "1", appliedLimit: 5 },
      sortingColumn: "PROJECT_GRANT_FIELD_NAME_CHANGE_DATE",
      result: [{ details: { id }, roleKeys: ["a"] }],
    });
    expect((await rest(`/project_grants/${id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await rest(`/project_grants/${id}`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as Msg).code).toBe(Code.NotFound);
  });
});
