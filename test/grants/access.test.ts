import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import type { Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { appClient } from "../apps/helpers.js";
import { idpClient } from "../idps/helpers.js";
import { clients, createGrant, createMachineUser, createOrg, createProject, getGrant, unique, type Clients } from "./helpers.js";

/** user.grant.read/write/delete, checked in the organization of the grant's project. */
describe.each(DATABASE_KINDS)("who may do what with user grants (%s)", (kind) => {
  let server: TestServer;
  let c: Clients;
  /** The project's organization, the user's organization, and one more. */
  let orgP: string;
  let orgU: string;
  let orgX: string;
  let projectP: string;
  let projectU: string;
  let userU: string;
  /** A grant on projectP for userU, and one on projectU (the user's organization's project). */
  let grantP: string;
  let grantU: string;
  const tokens: Record<string, string> = {};
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;

  const denied = (r: CallResult, label: string) => expect(r, `${label}: ${JSON.stringify(r)}`).toMatchObject({ ok: false, code: Code.PermissionDenied });
  const notFound = (r: CallResult, label: string) => expect(r, `${label}: ${JSON.stringify(r)}`).toMatchObject({ ok: false, code: Code.NotFound });
  const ok = (r: CallResult, label: string): Msg => {
    expect(r, `${label}: ${JSON.stringify(r)}`).toMatchObject({ ok: true });
    return (r as { message: Msg }).message;
  };
  const as = (who: string, method: string, req: JsonObject) => c.grants.call(method, req, tokens[who]);
  const searchIds = async (who: string, req: JsonObject = {}) =>
    (ok(await as(who, "SearchUserGrants", req), `${who} searches`).result ?? []).map((r: Msg) => r.details.id);

  beforeAll(async () => {
    server = await startTestServer(kind);
    c = clients(server.baseUrl, server.adminToken);
    orgP = await createOrg(c);
    orgU = await createOrg(c);
    orgX = await createOrg(c);
    projectP = await createProject(c, orgP, ["a", "b"]);
    projectU = await createProject(c, orgU, ["a"]);
    userU = await createMachineUser(c, orgU);
    grantP = await createGrant(c, projectP, userU, ["a"]);
    grantU = await createGrant(c, projectU, userU, ["a"]);
    const user = async (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => (await server.createUser({ roles })).token;
    tokens.iam = await user([{ context: "instance", roles: ["IAM_OWNER"] }]);
    tokens.iamViewer = await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]);
    tokens.ownerP = await user([{ context: "org", contextId: orgP, roles: ["ORG_OWNER"] }]);
    tokens.ownerU = await user([{ context: "org", contextId: orgU, roles: ["ORG_OWNER"] }]);
    tokens.viewerP = await user([{ context: "org", contextId: orgP, roles: ["ORG_OWNER_VIEWER"] }]);
    tokens.ownerPX = await user([
      { context: "org", contextId: orgP, roles: ["ORG_OWNER"] },
      { context: "org", contextId: orgX, roles: ["ORG_OWNER"] },
    ]);
    tokens.plain = await user([]);
    other = await server.createInstance("127.0.0.1");
  });
  afterAll(() => server?.close());

  it("lets IAM_OWNER and the project organization's ORG_OWNER do everything", async () => {
    for (const who of ["iam", "ownerP"]) {
      const userId = await createMachineUser(c, orgX);
      const created = ok(await as(who, "CreateUserGrant", { projectId: projectP, grant: { userId, roleKeys: ["a"] } }), `${who} creates`);
      const id = created.details.id;
      expect(ok(await as(who, "GetUserGrant", { id }), `${who} reads`).grant).toMatchObject({
        projectId: projectP,
        grant: { userId, roleKeys: ["a"] },
        userOrgId: orgX,
      });
      expect(ok(await as(who, "PatchUserGrant", { id, grant: { roleKeys: ["a", "b"] } }), `${who} patches`).details.sequence).toBe("2");
      expect(await searchIds(who, { filters: [{ userId: { userId } }] })).toEqual([id]);
      expect(ok(await as(who, "DeleteUserGrant", { id }), `${who} deletes`).details.sequence).toBe("3");
      notFound(await as(who, "GetUserGrant", { id }), `${who} reads the deleted grant`);
    }
  });

  it("refuses every method to the ORG_OWNER of the user's organization on another organization's project", async () => {
    const before = await getGrant(c, grantP);
    const newUser = await createMachineUser(c, orgU);
    denied(await as("ownerU", "CreateUserGrant", { projectId: projectP, grant: { userId: newUser, roleKeys: [] } }), "create");
    denied(await as("ownerU", "GetUserGrant", { id: grantP }), "get");
    denied(await as("ownerU", "PatchUserGrant", { id: grantP, grant: { roleKeys: [] } }), "patch");
    denied(await as("ownerU", "DeleteUserGrant", { id: grantP }), "delete");
    expect(await getGrant(c, grantP)).toEqual(before);
    expect((await c.grants.ok("SearchUserGrants", { filters: [{ userId: { userId: newUser } }] })).result ?? []).toEqual([]);
    // Its own organization's grants it manages; its search shows only those.
    expect(ok(await as("ownerU", "GetUserGrant", { id: grantU }), "get own").grant.details.id).toBe(grantU);
    expect(await searchIds("ownerU")).toEqual([grantU]);
    expect(await searchIds("ownerU", { filters: [{ userId: { userId: userU } }] })).toEqual([grantU]);
  });

  it("lets ORG_OWNER_VIEWER and IAM_OWNER_VIEWER read but not write", async () => {
    const before = await getGrant(c, grantP);
    for (const who of ["viewerP", "iamViewer"]) {
      expect(ok(await as(who, "GetUserGrant", { id: grantP }), `${who} reads`).grant).toEqual(before);
      denied(await as(who, "CreateUserGrant", { projectId: projectP, grant: { userId: await createMachineUser(c, orgP), roleKeys: [] } }), `${who} creates`);
      denied(await as(who, "PatchUserGrant", { id: grantP, grant: { roleKeys: ["a", "b"] } }), `${who} patches`);
      denied(await as(who, "DeleteUserGrant", { id: grantP }), `${who} deletes`);
    }
    expect(await getGrant(c, grantP)).toEqual(before);
    expect(await searchIds("viewerP", { filters: [{ userId: { userId: userU } }] })).toEqual([grantP]);
    expect((await searchIds("iamViewer", { filters: [{ userId: { userId: userU } }] })).sort()).toEqual([grantP, grantU].sort());
    denied(await as("viewerP", "GetUserGrant", { id: grantU }), "viewerP reads another organization's grant");
  });

  it("refuses every method to a user without memberships", async () => {
    denied(await as("plain", "CreateUserGrant", { projectId: projectP, grant: { userId: userU, roleKeys: [] } }), "create");
    denied(await as("plain", "GetUserGrant", { id: grantP }), "get");
    denied(await as("plain", "PatchUserGrant", { id: grantP, grant: { roleKeys: [] } }), "patch");
    denied(await as("plain", "DeleteUserGrant", { id: grantP }), "delete");
    denied(await as("plain", "SearchUserGrants", {}), "search");
    expect(await c.grants.call("GetUserGrant", { id: grantP }, "")).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(await c.grants.call("SearchUserGrants", {}, "not-a-token")).toMatchObject({ ok: false, code: Code.Unauthenticated });
  });

  it("answers NotFound to a caller with the permission whose ctx names another organization", async () => {
    const before = await getGrant(c, grantP);
    for (const who of ["iam", "ownerPX"]) {
      const ctx = { orgId: orgX };
      notFound(await as(who, "GetUserGrant", { id: grantP, ctx }), `${who} get`);
      notFound(await as(who, "PatchUserGrant", { id: grantP, grant: { roleKeys: [] }, ctx }), `${who} patch`);
      notFound(await as(who, "DeleteUserGrant", { id: grantP, ctx }), `${who} delete`);
      notFound(
        await as(who, "CreateUserGrant", { projectId: projectP, grant: { userId: await createMachineUser(c, orgX), roleKeys: [] }, ctx }),
        `${who} create`,
      );
      expect(await searchIds(who, { ctx })).toEqual([]);
      expect(ok(await as(who, "GetUserGrant", { id: grantP, ctx: { orgId: orgP } }), `${who} get in orgP`).grant).toEqual(before);
    }
    // The user's organization as ctx: the user's owner has the permission there, but the grant is not there.
    notFound(
      await as("ownerU", "CreateUserGrant", { projectId: projectP, grant: { userId: await createMachineUser(c, orgU), roleKeys: [] }, ctx: { orgId: orgU } }),
      "ownerU create with its ctx",
    );
    notFound(await as("ownerU", "GetUserGrant", { id: grantP, ctx: { orgId: orgU } }), "ownerU get with its ctx");
    notFound(await as("ownerU", "DeleteUserGrant", { id: grantP, ctx: { orgId: orgU } }), "ownerU delete with its ctx");
    expect(await getGrant(c, grantP)).toEqual(before);
  });

  it("searches an organization context only with the permission there", async () => {
    denied(await as("ownerU", "SearchUserGrants", { ctx: { orgId: orgP } }), "ownerU searches orgP");
    denied(await as("viewerP", "SearchUserGrants", { ctx: { orgId: orgU } }), "viewerP searches orgU");
    denied(await as("plain", "SearchUserGrants", { ctx: { orgId: orgP } }), "plain searches orgP");
    expect(await searchIds("viewerP", { ctx: { orgId: orgP } })).toEqual([grantP]);
    expect(await searchIds("ownerU", { ctx: { orgId: orgU } })).toEqual([grantU]);
    expect((await searchIds("ownerPX")).sort()).toEqual([grantP]);
    expect(await searchIds("ownerPX", { ctx: { orgId: orgX } })).toEqual([]);
    const primary = (await c.orgs.ok("GetOrganization", { id: orgP })).organization.primaryDomain as string;
    expect(await searchIds("viewerP", { ctx: { orgDomain: primary } })).toEqual([grantP]);
    expect(ok(await as("ownerP", "GetUserGrant", { id: grantP, ctx: { orgDomain: primary } }), "get by org domain").grant.details.id).toBe(grantP);
  });

  it("answers NotFound for grants that do not exist, whoever asks", async () => {
    for (const who of ["iam", "ownerP", "viewerP", "iamViewer"]) notFound(await as(who, "GetUserGrant", { id: "no-such-grant" }), `${who} get`);
    for (const who of ["iam", "ownerP", "ownerU"]) {
      notFound(await as(who, "CreateUserGrant", { projectId: "no-such-project", grant: { userId: userU, roleKeys: [] } }), `${who} create`);
    }
    notFound(await as("ownerP", "DeleteUserGrant", { id: "no-such-grant" }), "ownerP delete");
    notFound(await as("ownerP", "PatchUserGrant", { id: "no-such-grant", grant: { roleKeys: [] } }), "ownerP patch");
  });

  it("keeps another instance's admin out", async () => {
    const there = clients(other.baseUrl, other.adminToken);
    notFound(await there.grants.call("GetUserGrant", { id: grantP }), "get");
    notFound(await there.grants.call("PatchUserGrant", { id: grantP, grant: { roleKeys: [] } }), "patch");
    notFound(await there.grants.call("DeleteUserGrant", { id: grantP }), "delete");
    notFound(await there.grants.call("CreateUserGrant", { projectId: projectP, grant: { userId: userU, roleKeys: [] } }), "create");
    expect((await there.grants.ok("SearchUserGrants", {})).result ?? []).toEqual([]);
    // Its token means nothing on this instance's host.
    expect(await c.grants.call("GetUserGrant", { id: grantP }, other.adminToken)).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(await c.grants.call("DeleteUserGrant", { id: grantP }, other.adminToken)).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(await getGrant(c, grantP)).toMatchObject({ details: { sequence: "1" }, grant: { userId: userU, roleKeys: ["a"] } });
  });

  it("counts in totalResult only what the caller may see: projects, applications, user grants, identity providers", async () => {
    // One more of each in the organizations ownerP does not own.
    const apps = appClient(server.baseUrl, server.adminToken);
    const idps = idpClient(server.baseUrl, server.adminToken);
    const appOf = async (projectId: string) =>
      (await apps.ok("CreateApp", { projectId, app: { name: unique("app"), api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } } })).details.id as string;
    const idpOf = async (orgId: string) =>
      (await idps.ok("CreateGitLabIDP", { idp: { idp: { name: unique("gitlab") }, config: { clientId: "c", clientSecret: "s" } }, ctx: { orgId } })).details
        .id as string;
    const hidden = new Set([projectU, grantU, await appOf(projectU), await idpOf(orgU), await idpOf(orgX)]);
    await appOf(projectP);
    await idpOf(orgP);
    const searches: [string, (req: JsonObject) => Promise<CallResult>][] = [
      ["SearchProjects", (req) => c.projects.call("SearchProjects", req, tokens.ownerP)],
      ["SearchUserGrants", (req) => as("ownerP", "SearchUserGrants", req)],
      ["SearchApps", (req) => appClient(server.baseUrl, tokens.ownerP!).call("SearchApps", req)],
      ["SearchIDPs", (req) => idps.call("SearchIDPs", { ...req, ctx: { orgId: orgP } }, tokens.ownerP)],
    ];
    for (const [name, search] of searches) {
      const all = ok(await search({ query: { limit: 1000 } }), name);
      const ids = ((all.result ?? []) as Msg[]).map((r) => String((r.details as Msg).id));
      expect(ids.length, name).toBeGreaterThan(0);
      expect(
        ids.filter((id) => hidden.has(id)),
        `${name} shows nothing of other organizations`,
      ).toEqual([]);
      expect(Number(all.details.totalResult), `${name} total`).toBe(ids.length);
      const first = ok(await search({ query: { limit: 1 } }), name);
      expect(Number(first.details.totalResult), `${name} total of a short page`).toBe(ids.length);
    }
  });
});
