import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { PlatformProjects } from "../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, INACTIVE, createGrant, createMachineUser, createOrg, createProject, grantClient, orgOwner, projectClient, role } from "./helpers.js";

type Step = { result: CallResult; status: number };

describe.each(DATABASE_KINDS)("every PlatformProjects RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  /** A project of the default organization that no protocol's owner may touch. */
  let foreign: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    foreign = await createProject(projectClient(server.baseUrl, server.adminToken), "Matrix Foreign");
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each on its own organization, owner, user and project. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const projects = protocolClient(PlatformProjects, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    const p = async (step: string, status: number, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      const result = await projects.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };

    const org = await createOrg(server.baseUrl, server.adminToken, `mx${t} Org`);
    const owner = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER"] }] });
    const member = await createMachineUser(server.baseUrl, server.adminToken, `mx${t}-member`, org);
    const ctx = { orgId: org };

    const created = okMessage(await p("created", 201, "CreateProject", { project: { name: `mx${t} Project`, projectRoleCheck: true }, ctx }));
    const id = created.details.id as string;
    await p("get", 200, "GetProject", { id });
    await p("getInOrg", 200, "GetProject", { id, ctx });
    await p("getOtherOrgCtx", 404, "GetProject", { id, ctx: { orgId: server.defaultOrgId } });
    await p("createDuplicate", 409, "CreateProject", { project: { name: `MX${t} PROJECT` }, ctx });
    await p("createInvalid", 400, "CreateProject", { project: { name: "" }, ctx });
    await p("patched", 200, "PatchProject", { id, project: { name: `mx${t} Renamed`, projectRoleAssertion: true } });
    await p("patchNothing", 200, "PatchProject", { id, project: {} });
    await p("patchMissing", 404, "PatchProject", { id: "no-such-project", project: { name: "x" } });

    await p("addRole", 201, "AddProjectRole", { projectId: id, role: role("admin", "Admin", "ops") });
    await p("addRole2", 201, "AddProjectRole", { projectId: id, role: role("viewer", "Viewer") });
    await p("addRoleDuplicate", 409, "AddProjectRole", { projectId: id, role: role("admin", "Again") });
    await p("addRoleInvalid", 400, "AddProjectRole", { projectId: id, role: role("white space", "x") });
    await p("patchRole", 200, "PatchProjectRole", { projectId: id, key: "viewer", role: { displayName: "Reader", group: "ops" } });
    await p("patchRoleSame", 200, "PatchProjectRole", { projectId: id, key: "viewer", role: { displayName: "Reader" } });
    await p("patchRoleMissing", 404, "PatchProjectRole", { projectId: id, key: "nobody", role: { displayName: "x" } });
    await p("searchRoles", 200, "SearchProjectRoles", { projectId: id, sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY", query: { asc: true } });
    await p("searchRolesFiltered", 200, "SearchProjectRoles", {
      projectId: id,
      filters: [{ group: { group: "OPS", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }, { key: { key: "v", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });

    // A grant of both roles loses the removed one.
    const grant = await createGrant(grantClient(server.baseUrl, server.adminToken), id, member, ["admin", "viewer"]);
    await p("removeRole", 200, "RemoveProjectRole", { projectId: id, key: "admin" });
    await p("removeRoleAgain", 404, "RemoveProjectRole", { projectId: id, key: "admin" });
    const afterRemoval = okMessage(await grantClient(server.baseUrl, server.adminToken).call("GetUserGrant", { id: grant }));

    await p("ownerGet", 200, "GetProject", { id }, owner.token);
    await p("ownerSearch", 200, "SearchProjects", { sortingColumn: "PROJECT_FIELD_NAME_NAME" }, owner.token);
    await p("ownerGetForeign", 403, "GetProject", { id: foreign }, owner.token);
    await p("ownerCreateInDefault", 403, "CreateProject", { project: { name: `mx${t} Denied` } }, owner.token);
    await p("ownerPatch", 200, "PatchProject", { id, project: { projectRoleCheck: false } }, owner.token);

    await p("deactivated", 200, "DeactivateProject", { id });
    await p("deactivateAgain", 400, "DeactivateProject", { id });
    await p("searchInactive", 200, "SearchProjects", {
      filters: [{ state: { state: INACTIVE } }, { name: { name: `mx${t}`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });
    await p("reactivated", 200, "ReactivateProject", { id });
    await p("reactivateAgain", 400, "ReactivateProject", { id });
    await p("searchLimitTooHigh", 400, "SearchProjects", { query: { limit: 1001 } });
    await p("afterChanges", 200, "GetProject", { id });

    await p("unauthenticated", 401, "GetProject", { id }, "");
    await p("deleted", 200, "DeleteProject", { id });
    await p("getDeleted", 404, "GetProject", { id });
    await p("deleteAgain", 404, "DeleteProject", { id });
    await p("rolesOfDeleted", 404, "SearchProjectRoles", { projectId: id });
    const grantGone = await grantClient(server.baseUrl, server.adminToken).call("GetUserGrant", { id: grant });
    await p("nameFreeAgain", 201, "CreateProject", { project: { name: `mx${t} Renamed` }, ctx });

    const recreated = okMessage(steps.nameFreeAgain!.result).details.id as string;
    return { steps, ids: { org, project: id, owner: owner.userId, member, grant, recreated, foreign, default: server.defaultOrgId }, afterRemoval, grantGone };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids, afterRemoval, grantGone } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => okMessage(r(step));
    const owner = orgOwner(ids.org);
    const details = (sequence: string, id = ids.project) => ({ id, sequence, changeDate: expect.any(String), resourceOwner: owner });
    const fail = (code: Code) => ({ ok: false, code });

    expect(m("created")).toEqual({ details: details("1") });
    expect(m("get")).toEqual({
      project: {
        details: { ...details("1"), changeDate: m("created").details.changeDate },
        project: { name: "mxga Project", projectRoleCheck: true },
        state: ACTIVE,
      },
    });
    expect(m("getInOrg")).toEqual(m("get"));
    expect(r("getOtherOrgCtx")).toMatchObject(fail(Code.NotFound));
    expect(r("createDuplicate")).toMatchObject(fail(Code.AlreadyExists));
    expect(r("createInvalid")).toMatchObject(fail(Code.InvalidArgument));
    expect(m("patched")).toEqual({ details: details("2") });
    expect(m("patchNothing")).toEqual({ details: { ...details("2"), changeDate: m("patched").details.changeDate } });
    expect(r("patchMissing")).toMatchObject(fail(Code.NotFound));

    expect(m("addRole")).toEqual({ details: details("3", "admin") });
    expect(m("addRole2")).toEqual({ details: details("4", "viewer") });
    expect(r("addRoleDuplicate")).toMatchObject(fail(Code.AlreadyExists));
    expect(r("addRoleInvalid")).toMatchObject(fail(Code.InvalidArgument));
    expect(m("patchRole")).toEqual({ details: details("5", "viewer") });
    expect(m("patchRoleSame")).toEqual({ details: details("5", "viewer") });
    expect(r("patchRoleMissing")).toMatchObject(fail(Code.NotFound));
    expect(m("searchRoles")).toMatchObject({ details: { totalResult: "2", endOfList: true, appliedLimit: 100 }, sortingColumn: "PROJECT_ROLE_FIELD_NAME_KEY" });
    expect(m("searchRoles").result).toEqual([
      { details: details("5", "admin"), role: { key: "admin", displayName: "Admin", group: "ops" } },
      { details: details("5", "viewer"), role: { key: "viewer", displayName: "Reader", group: "ops" } },
    ]);
    expect(m("searchRolesFiltered").result.map((x: Msg) => x.role.key)).toEqual(["viewer"]);

    expect(m("removeRole")).toEqual({ details: details("6", "admin") });
    expect(r("removeRoleAgain")).toMatchObject(fail(Code.NotFound));
    expect(afterRemoval.grant).toMatchObject({
      details: { id: ids.grant, sequence: "2", resourceOwner: owner },
      projectId: ids.project,
      grant: { userId: ids.member, roleKeys: ["viewer"] },
    });

    expect(m("ownerGet").project.details).toMatchObject({ id: ids.project, sequence: "6" });
    expect(m("ownerSearch").result.map((x: Msg) => x.project.name)).toEqual(["mxga Renamed"]);
    expect(m("ownerSearch").sortingColumn).toBe("PROJECT_FIELD_NAME_NAME");
    expect(r("ownerGetForeign")).toMatchObject(fail(Code.PermissionDenied));
    expect(r("ownerCreateInDefault")).toMatchObject(fail(Code.PermissionDenied));
    expect(m("ownerPatch")).toEqual({ details: details("7") });

    expect(m("deactivated")).toEqual({ details: details("8") });
    expect(r("deactivateAgain")).toMatchObject(fail(Code.FailedPrecondition));
    expect(m("searchInactive").result.map((x: Msg) => x.details.id)).toEqual([ids.project]);
    expect(m("reactivated")).toEqual({ details: details("9") });
    expect(r("reactivateAgain")).toMatchObject(fail(Code.FailedPrecondition));
    expect(r("searchLimitTooHigh")).toMatchObject(fail(Code.InvalidArgument));
    expect(m("afterChanges").project).toEqual({ details: details("9"), project: { name: "mxga Renamed", projectRoleAssertion: true }, state: ACTIVE });

    expect(r("unauthenticated")).toMatchObject(fail(Code.Unauthenticated));
    expect(m("deleted")).toEqual({ details: details("10") });
    for (const step of ["getDeleted", "deleteAgain", "rolesOfDeleted"]) expect(r(step), step).toMatchObject(fail(Code.NotFound));
    expect(grantGone).toMatchObject(fail(Code.NotFound));
    expect(m("nameFreeAgain")).toEqual({ details: details("1", ids.recreated) });
    expect(ids.recreated).not.toBe(ids.project);

    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparable(v.result, ids, { prefix: "mx" })]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, theirs, { prefix: "mx" }), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("answers raw REST calls on the documented paths with the documented statuses", async () => {
    const rest = (path: string, init: RequestInit & { token?: string } = {}) =>
      fetch(`${server.baseUrl}/resources/v3alpha${path}`, {
        ...init,
        headers: {
          ...(init.token !== "" && { authorization: `Bearer ${init.token ?? server.adminToken}` }),
          "content-type": "application/json",
          ...init.headers,
        },
      });
    const check = async (res: Response, status: number, code: Code) => {
      expect(res.status).toBe(status);
      const body = (await res.json()) as JsonObject;
      expect(Object.keys(body).sort()).toEqual(["code", "details", "message"]);
      expect(body.code).toBe(code);
    };
    const org = await createOrg(server.baseUrl, server.adminToken, "Rest Raw Org");
    const plain = await server.createUser({});

    const created = await rest(`/projects?ctx.orgId=${org}`, { method: "POST", body: JSON.stringify({ name: "Rest Raw", projectRoleAssertion: true }) });
    expect(created.status).toBe(201);
    const made = (await created.json()) as Msg;
    expect(made.details).toMatchObject({ sequence: "1", resourceOwner: orgOwner(org) });
    const id = made.details.id as string;
    const inDefault = await rest("/projects", { method: "POST", body: JSON.stringify({ name: "Rest Raw" }) });
    expect(inDefault.status).toBe(201);
    expect(((await inDefault.json()) as Msg).details.resourceOwner).toEqual(orgOwner(server.defaultOrgId));
    await check(await rest(`/projects?ctx.orgId=${org}`, { method: "POST", body: JSON.stringify({ name: "REST RAW" }) }), 409, Code.AlreadyExists);
    await check(await rest("/projects", { method: "POST", body: JSON.stringify({ name: "" }) }), 400, Code.InvalidArgument);
    await check(await rest("/projects/no-such-project"), 404, Code.NotFound);
    await check(await rest(`/projects/${id}`, { token: plain.token }), 403, Code.PermissionDenied);
    await check(await rest(`/projects/${id}`, { token: "" }), 401, Code.Unauthenticated);

    const got = await rest(`/projects/${id}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as Msg).project).toMatchObject({ project: { name: "Rest Raw", projectRoleAssertion: true }, state: ACTIVE });
    const patched = await rest(`/projects/${id}`, { method: "PATCH", body: JSON.stringify({ name: "Rest Raw 2" }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Msg).details.sequence).toBe("2");

    const added = await rest(`/projects/${id}/roles`, { method: "POST", body: JSON.stringify({ key: "reader", displayName: "Reader" }) });
    expect(added.status).toBe(201);
    expect(((await added.json()) as Msg).details).toMatchObject({ id: "reader", sequence: "3", resourceOwner: orgOwner(org) });
    await check(
      await rest(`/projects/${id}/roles`, { method: "POST", body: JSON.stringify({ key: "reader", displayName: "Again" }) }),
      409,
      Code.AlreadyExists,
    );
    const patchedRole = await rest(`/projects/${id}/roles/reader`, { method: "PATCH", body: JSON.stringify({ group: "docs" }) });
    expect(patchedRole.status).toBe(200);
    expect(((await patchedRole.json()) as Msg).details).toMatchObject({ id: "reader", sequence: "4" });
    const roles = await rest(`/projects/${id}/roles/_search?query.asc=true`, { method: "POST", body: JSON.stringify([{ group: { group: "docs" } }]) });
    expect(roles.status).toBe(200);
    expect(await roles.json()).toMatchObject({
      details: { totalResult: "1" },
      result: [{ details: { id: "reader", sequence: "4" }, role: { key: "reader", displayName: "Reader", group: "docs" } }],
    });
    await check(await rest(`/projects/${id}/roles/nobody`, { method: "PATCH", body: JSON.stringify({ group: "x" }) }), 404, Code.NotFound);
    const removedRole = await rest(`/projects/${id}/roles/reader`, { method: "DELETE" });
    expect(removedRole.status).toBe(200);
    expect(((await removedRole.json()) as Msg).details).toMatchObject({ id: "reader", sequence: "5" });
    await check(await rest(`/projects/${id}/roles/reader`, { method: "DELETE" }), 404, Code.NotFound);

    const searched = await rest("/projects/_search?query.limit=1&sortingColumn=PROJECT_FIELD_NAME_NAME&query.asc=true", {
      method: "POST",
      body: JSON.stringify([{ name: { name: "rest raw", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }]),
    });
    expect(searched.status).toBe(200);
    expect(await searched.json()).toMatchObject({
      details: { totalResult: "2", appliedLimit: 1 },
      sortingColumn: "PROJECT_FIELD_NAME_NAME",
      result: [{ project: { name: "Rest Raw" } }],
    });
    const inOrg = await rest(`/projects/_search?ctx.orgId=${org}`, { method: "POST", body: JSON.stringify([]) });
    expect(((await inOrg.json()) as Msg).result.map((x: Msg) => x.details.id)).toEqual([id]);
    await check(await rest("/projects/_search?query.limit=1001", { method: "POST", body: "[]" }), 400, Code.InvalidArgument);

    expect((await rest(`/projects/${id}/_deactivate`, { method: "POST" })).status).toBe(200);
    await check(await rest(`/projects/${id}/_deactivate`, { method: "POST" }), 400, Code.FailedPrecondition);
    expect((await rest(`/projects/${id}/_reactivate`, { method: "POST" })).status).toBe(200);
    await check(await rest(`/projects/${id}/_reactivate`, { method: "POST" }), 400, Code.FailedPrecondition);
    await check(await rest(`/projects/${id}?ctx.orgId=${server.defaultOrgId}`, { method: "DELETE" }), 404, Code.NotFound);
    const deleted = await rest(`/projects/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as Msg).details).toMatchObject({ id, sequence: "8" });
    await check(await rest(`/projects/${id}`, { method: "DELETE" }), 404, Code.NotFound);
  });
});
