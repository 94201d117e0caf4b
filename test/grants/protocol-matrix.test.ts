import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { clients, createMachineUser, createOrg, createProject, orgOwner, type Client } from "./helpers.js";

type Step = { result: CallResult; status: number };

describe.each(DATABASE_KINDS)("every PlatformGrants RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each on its own organizations, project and users. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const setup = clients(server.baseUrl, server.adminToken);
    const under = clients(server.baseUrl, server.adminToken, protocol);
    const org = await createOrg(setup, `gm${t} Project Org`);
    const userOrg = await createOrg(setup, `gm${t} User Org`);
    const project = await createProject(setup, org, ["reader", "writer", "admin"], `gm${t} Project`);
    const user = await createMachineUser(setup, userOrg, `gm${t}-user`);
    const second = await createMachineUser(setup, org, `gm${t}-second`);
    const ownerOfUserOrg = await server.createUser({ roles: [{ context: "org", contextId: userOrg, roles: ["ORG_OWNER"] }] });

    const steps: Record<string, Step> = {};
    const run = async (step: string, status: number, client: Client, method: string, req: JsonObject, token: string = server.adminToken) => {
      const result = await client.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const g = (step: string, status: number, method: string, req: JsonObject, token?: string) => run(step, status, under.grants, method, req, token);

    const created = okMessage(await g("create", 201, "CreateUserGrant", { projectId: project, grant: { userId: user, roleKeys: ["writer", "reader"] } }));
    const id: string = created.details.id;
    await g("createAgain", 409, "CreateUserGrant", { projectId: project, grant: { userId: user, roleKeys: [] } });
    await g("createUnknownRole", 400, "CreateUserGrant", { projectId: project, grant: { userId: second, roleKeys: ["reader", "nope"] } });
    await g("createUnknownUser", 404, "CreateUserGrant", { projectId: project, grant: { userId: "no-such-user", roleKeys: [] } });
    await g("createUnknownProject", 404, "CreateUserGrant", { projectId: "no-such-project", grant: { userId: second, roleKeys: [] } });
    await g("createDuplicateKeys", 400, "CreateUserGrant", { projectId: project, grant: { userId: second, roleKeys: ["reader", "reader"] } });
    await g("createInUserOrg", 404, "CreateUserGrant", { projectId: project, grant: { userId: second, roleKeys: [] }, ctx: { orgId: userOrg } });
    await g("createEmpty", 201, "CreateUserGrant", { projectId: project, grant: { userId: second, roleKeys: [] }, ctx: { orgId: org } });

    await g("get", 200, "GetUserGrant", { id });
    await g("getMissing", 404, "GetUserGrant", { id: "no-such-grant" });
    await g("getInUserOrg", 404, "GetUserGrant", { id, ctx: { orgId: userOrg } });
    await g("getByUserOrgOwner", 403, "GetUserGrant", { id }, ownerOfUserOrg.token);

    await g("patch", 200, "PatchUserGrant", { id, grant: { roleKeys: ["admin", "reader"] } });
    await g("patchSameOtherOrder", 200, "PatchUserGrant", { id, grant: { roleKeys: ["reader", "admin"] } });
    await g("patchUnknown", 400, "PatchUserGrant", { id, grant: { roleKeys: ["admin", "ghost"] } });
    await g("patchInvalid", 400, "PatchUserGrant", { id, grant: { roleKeys: [""] } });
    await g("patchMissing", 404, "PatchUserGrant", { id: "no-such-grant", grant: { roleKeys: [] } });
    await g("afterPatch", 200, "GetUserGrant", { id });

    await g("searchProject", 200, "SearchUserGrants", { filters: [{ projectId: { projectId: project } }], query: { asc: true } });
    await g("searchRole", 200, "SearchUserGrants", {
      filters: [{ projectId: { projectId: project } }, { roleKey: { roleKey: "admin" } }],
      sortingColumn: "USER_GRANT_FIELD_NAME_CHANGE_DATE",
    });
    await g("searchUserOrg", 200, "SearchUserGrants", { ctx: { orgId: userOrg } });
    await g("searchPaged", 200, "SearchUserGrants", { ctx: { orgId: org }, query: { limit: 1, asc: true } });
    await g("searchLimit", 400, "SearchUserGrants", { query: { limit: 1001 } });

    await run("removeRole", 200, under.projects, "RemoveProjectRole", { projectId: project, key: "admin" });
    await g("afterRemoveRole", 200, "GetUserGrant", { id });

    await g("delete", 200, "DeleteUserGrant", { id });
    await g("getDeleted", 404, "GetUserGrant", { id });
    await g("deleteAgain", 404, "DeleteUserGrant", { id });
    await run("deleteProject", 200, under.projects, "DeleteProject", { id: project });
    await g("searchAfterProject", 200, "SearchUserGrants", { filters: [{ userId: { userId: second } }] });
    await g("unauthenticated", 401, "SearchUserGrants", {}, "");
    return { steps, ids: { org, userOrg, project, user, second, grant: id, empty: okMessage(steps.createEmpty!.result).details.id as string } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: s, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => s[step]!.result;
    const msg = (step: string): Msg => okMessage(r(step));
    const owner = orgOwner(ids.org);
    const code = (step: string, expected: Code) => expect(r(step), step).toMatchObject({ ok: false, code: expected });

    expect(msg("create")).toEqual({ details: { id: ids.grant, sequence: "1", changeDate: expect.any(String), resourceOwner: owner } });
    code("createAgain", Code.AlreadyExists);
    code("createUnknownRole", Code.FailedPrecondition);
    expect((r("createUnknownRole") as { message: string }).message).toContain('"nope"');
    code("createUnknownUser", Code.NotFound);
    code("createUnknownProject", Code.NotFound);
    code("createDuplicateKeys", Code.InvalidArgument);
    code("createInUserOrg", Code.NotFound);
    expect(msg("createEmpty").details).toMatchObject({ id: ids.empty, sequence: "1", resourceOwner: owner });

    const view = (sequence: string, roleKeys: string[] | undefined, changeDate: unknown = expect.any(String)) => ({
      details: { id: ids.grant, sequence, changeDate, resourceOwner: owner },
      projectId: ids.project,
      grant: { userId: ids.user, ...(roleKeys && { roleKeys }) },
      userOrgId: ids.userOrg,
    });
    expect(msg("get")).toEqual({ grant: view("1", ["reader", "writer"], msg("create").details.changeDate) });
    code("getMissing", Code.NotFound);
    code("getInUserOrg", Code.NotFound);
    code("getByUserOrgOwner", Code.PermissionDenied);

    expect(msg("patch")).toEqual({ details: { id: ids.grant, sequence: "2", changeDate: expect.any(String), resourceOwner: owner } });
    expect(msg("patchSameOtherOrder")).toEqual(msg("patch"));
    code("patchUnknown", Code.FailedPrecondition);
    code("patchInvalid", Code.InvalidArgument);
    code("patchMissing", Code.NotFound);
    expect(msg("afterPatch")).toEqual({ grant: view("2", ["admin", "reader"], msg("patch").details.changeDate) });

    expect(msg("searchProject").result.map((x: Msg) => x.details.id)).toEqual([ids.grant, ids.empty]);
    expect(msg("searchProject").result[0]).toEqual(msg("afterPatch").grant);
    expect(msg("searchProject").details).toMatchObject({ totalResult: "2", endOfList: true, appliedLimit: 100 });
    expect(msg("searchRole")).toMatchObject({ sortingColumn: "USER_GRANT_FIELD_NAME_CHANGE_DATE", result: [{ details: { id: ids.grant } }] });
    expect(msg("searchRole").result).toHaveLength(1);
    expect(msg("searchUserOrg").result ?? []).toEqual([]);
    expect(msg("searchPaged").result.map((x: Msg) => x.details.id)).toEqual([ids.grant]);
    expect(msg("searchPaged").details).toMatchObject({ totalResult: "2", appliedLimit: 1 });
    expect(msg("searchPaged").details.endOfList ?? false).toBe(false);
    code("searchLimit", Code.InvalidArgument);

    expect(msg("afterRemoveRole")).toEqual({ grant: view("3", ["reader"]) });
    expect(msg("delete")).toEqual({ details: { id: ids.grant, sequence: "4", changeDate: expect.any(String), resourceOwner: owner } });
    code("getDeleted", Code.NotFound);
    code("deleteAgain", Code.NotFound);
    expect(msg("searchAfterProject").result ?? []).toEqual([]);
    code("unauthenticated", Code.Unauthenticated);

    const reference = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, comparable(v.result, ids, { prefix: "gm" })]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(s));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, theirs, { prefix: "gm" }), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("answers REST calls on the documented paths with rpcStatus errors", async () => {
    const c = clients(server.baseUrl, server.adminToken);
    const org = await createOrg(c);
    const project = await createProject(c, org, ["a", "b"]);
    const user = await createMachineUser(c, org);
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/resources/v3alpha${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", ...init.headers },
      });

    const created = await rest(`/projects/${project}/user_grants`, { method: "POST", body: JSON.stringify({ userId: user, roleKeys: ["b", "a"] }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as Msg).details.id as string;
    const again = await rest(`/projects/${project}/user_grants?ctx.orgId=${org}`, { method: "POST", body: JSON.stringify({ userId: user }) });
    expect(again.status).toBe(409);
    expect(Object.keys((await again.json()) as JsonObject).sort()).toEqual(["code", "details", "message"]);
    const got = await rest(`/user_grants/${id}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as Msg).grant).toMatchObject({ projectId: project, grant: { userId: user, roleKeys: ["a", "b"] }, userOrgId: org });
    const patched = await rest(`/user_grants/${id}`, { method: "PATCH", body: JSON.stringify({ roleKeys: ["a"] }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Msg).details.sequence).toBe("2");
    const searched = await rest(`/user_grants/_search?query.limit=5&sortingColumn=USER_GRANT_FIELD_NAME_CHANGE_DATE`, {
      method: "POST",
      body: JSON.stringify([{ roleKey: { roleKey: "a" } }, { projectId: { projectId: project } }]),
    });
    expect(searched.status).toBe(200);
    expect(await searched.json()).toMatchObject({
      details: { totalResult: "1", appliedLimit: 5 },
      sortingColumn: "USER_GRANT_FIELD_NAME_CHANGE_DATE",
      result: [{ details: { id } }],
    });
    const unknownRole = await rest(`/user_grants/${id}`, { method: "PATCH", body: JSON.stringify({ roleKeys: ["zzz"] }) });
    expect(unknownRole.status).toBe(400);
    expect(((await unknownRole.json()) as Msg).code).toBe(Code.FailedPrecondition);
    expect((await rest(`/projects/${project}/roles/a`, { method: "DELETE" })).status).toBe(200);
    expect(((await (await rest(`/user_grants/${id}`)).json()) as Msg).grant.details.sequence).toBe("3");
    expect((await rest(`/user_grants/${id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await rest(`/user_grants/${id}`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as Msg).code).toBe(Code.NotFound);
  });
});
