import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformApps } from "../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  ACTIVE,
  API_BASIC,
  CLIENT_ID,
  INACTIVE,
  NONE,
  POST,
  SECRET,
  appRow,
  createOrg,
  createProject,
  hashToken,
  oidc,
  oidcDefaults,
  orgOwner,
  projectClient,
} from "./helpers.js";

type Step = { result: CallResult; status: number };

/** Client IDs and secrets differ per run: each becomes a placeholder (after its shape is checked). */
function withoutVolatile(result: CallResult): CallResult {
  if (!result.ok) return result;
  const text = JSON.stringify(result.message, (key, value: unknown) => {
    if (key === "clientId" && typeof value === "string") return CLIENT_ID.test(value) ? "<clientId>" : `bad clientId ${value}`;
    if (key === "clientSecret" && typeof value === "string") return SECRET.test(value) ? "<secret>" : `bad secret ${value}`;
    return value;
  });
  return { ...result, message: JSON.parse(text) };
}

describe.each(DATABASE_KINDS)("every PlatformApps RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  /** A project of the default organization that no protocol's owner may touch. */
  let foreign: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    foreign = await createProject(server.baseUrl, server.adminToken, "Matrix Foreign");
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each on its own organization, owner and project. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const apps = protocolClient(PlatformApps, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    const secrets: string[] = [];
    const p = async (step: string, status: number, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      const result = await apps.call(method, req, token);
      if (result.ok && typeof result.message.clientSecret === "string") secrets.push(result.message.clientSecret);
      steps[step] = { result, status };
      return result;
    };

    const org = await createOrg(server.baseUrl, server.adminToken, `mx${t} Org`);
    const owner = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER"] }] });
    const viewer = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER_VIEWER"] }] });
    const project = await createProject(server.baseUrl, server.adminToken, `mx${t} Project`, org);
    const ctx = { orgId: org };

    const created = okMessage(await p("created", 201, "CreateApp", { projectId: project, app: { name: `mx${t} Web`, oidc: oidc() } }));
    const id = created.details.id as string;
    const createdApi = okMessage(await p("createdApi", 201, "CreateApp", { projectId: project, app: { name: `mx${t} Api`, api: {} }, ctx }));
    const api = createdApi.details.id as string;
    const createdPublic = okMessage(
      await p("createdPublic", 201, "CreateApp", { projectId: project, app: { name: `mx${t} Public`, oidc: oidc({ authMethodType: NONE }) } }),
    );
    const pub = createdPublic.details.id as string;
    await p("createDuplicate", 409, "CreateApp", { projectId: project, app: { name: `MX${t} WEB`, api: {} } });
    await p("createInvalid", 400, "CreateApp", { projectId: project, app: { name: `mx${t} Bad`, oidc: oidc({ redirectUris: ["http://app.example/cb"] }) } });
    await p("createNoConfig", 400, "CreateApp", { projectId: project, app: { name: `mx${t} Bad` } });
    await p("createMissingProject", 404, "CreateApp", { projectId: "no-such-project", app: { name: "x", api: {} } });
    await p("get", 200, "GetApp", { id });
    await p("getInOrg", 200, "GetApp", { id, ctx });
    await p("getOtherOrgCtx", 404, "GetApp", { id, ctx: { orgId: server.defaultOrgId } });
    await p("getMissing", 404, "GetApp", { id: "no-such-app" });

    await p("patched", 200, "PatchApp", { id, app: { name: `mx${t} Renamed`, oidc: { redirectUris: { values: ["https://mx.example/cb"] }, devMode: true } } });
    await p("patchNothing", 200, "PatchApp", { id, app: {} });
    await p("patchInvalid", 400, "PatchApp", { id, app: { oidc: { grantTypes: { values: [] } } } });
    await p("patchWrongKind", 400, "PatchApp", { id, app: { api: { authMethodType: API_BASIC } } });
    await p("patchToNone", 200, "PatchApp", { id: pub, app: { oidc: { authMethodType: NONE } } });
    await p("patchToPost", 200, "PatchApp", { id: pub, app: { oidc: { authMethodType: POST } } });
    const postSecret = okMessage(steps.patchToPost!.result).clientSecret as string;
    await p("regenerated", 200, "RegenerateAppSecret", { id: pub });
    const regenerated = okMessage(steps.regenerated!.result).clientSecret as string;
    const hashAfterRegenerate = (await appRow(server, pub))!.secret_hash;
    await p("backToNone", 200, "PatchApp", { id: pub, app: { oidc: { authMethodType: NONE } } });
    await p("regenerateNone", 400, "RegenerateAppSecret", { id: pub });

    await p("ownerGet", 200, "GetApp", { id }, owner.token);
    await p("ownerSearch", 200, "SearchApps", { sortingColumn: "APP_FIELD_NAME_NAME", query: { asc: true } }, owner.token);
    await p("ownerCreateForeign", 403, "CreateApp", { projectId: foreign, app: { name: `mx${t} Denied`, api: {} } }, owner.token);
    await p("ownerPatch", 200, "PatchApp", { id: api, app: { name: `mx${t} Api 2` } }, owner.token);
    await p("viewerGet", 200, "GetApp", { id: api }, viewer.token);
    await p("viewerPatch", 403, "PatchApp", { id: api, app: { name: `mx${t} Viewer` } }, viewer.token);
    await p("unauthenticated", 401, "GetApp", { id }, "");

    await p("deactivated", 200, "DeactivateApp", { id });
    await p("deactivateAgain", 400, "DeactivateApp", { id });
    await p("searchInactive", 200, "SearchApps", { filters: [{ state: { state: INACTIVE } }, { projectId: { projectId: project } }] });
    await p("reactivated", 200, "ReactivateApp", { id });
    await p("reactivateAgain", 400, "ReactivateApp", { id });
    await p("searchByClientId", 200, "SearchApps", { filters: [{ clientId: { clientId: created.clientId } }] });
    await p("searchLimitTooHigh", 400, "SearchApps", { query: { limit: 1001 } });
    await p("afterChanges", 200, "GetApp", { id });

    await p("deleted", 200, "DeleteApp", { id });
    await p("getDeleted", 404, "GetApp", { id });
    await p("deleteAgain", 404, "DeleteApp", { id });
    await p("nameFreeAgain", 201, "CreateApp", {
      projectId: project,
      app: { name: `mx${t} Renamed`, api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } },
    });
    await projectClient(server.baseUrl, server.adminToken).ok("DeleteProject", { id: project });
    await p("goneWithProject", 404, "GetApp", { id: api });

    const recreated = okMessage(steps.nameFreeAgain!.result).details.id as string;
    return {
      steps,
      ids: { org, project, app: id, api, pub, recreated, owner: owner.userId, viewer: viewer.userId, foreign, default: server.defaultOrgId },
      clientId: created.clientId as string,
      secrets,
      postSecret,
      regenerated,
      hashAfterRegenerate,
    };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids, clientId, postSecret, regenerated, hashAfterRegenerate } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => okMessage(r(step));
    const owner = orgOwner(ids.org);
    const details = (sequence: string, id = ids.app) => ({ id, sequence, changeDate: expect.any(String), resourceOwner: owner });
    const fail = (code: Code) => ({ ok: false, code });

    expect(m("created")).toEqual({ details: details("1"), clientId: expect.stringMatching(CLIENT_ID), clientSecret: expect.stringMatching(SECRET) });
    expect(m("createdApi")).toEqual({
      details: details("1", ids.api),
      clientId: expect.stringMatching(CLIENT_ID),
      clientSecret: expect.stringMatching(SECRET),
    });
    expect(m("createdPublic")).toEqual({ details: details("1", ids.pub), clientId: expect.stringMatching(CLIENT_ID) });
    expect(r("createDuplicate")).toMatchObject(fail(Code.AlreadyExists));
    for (const step of ["createInvalid", "createNoConfig"]) expect(r(step), step).toMatchObject(fail(Code.InvalidArgument));
    expect(r("createMissingProject")).toMatchObject(fail(Code.NotFound));
    expect(m("get")).toEqual({
      app: {
        details: { ...details("1"), changeDate: m("created").details.changeDate },
        projectId: ids.project,
        app: { name: "mxga Web", oidc: oidcDefaults() },
        clientId,
        state: ACTIVE,
        hasSecret: true,
      },
    });
    expect(m("getInOrg")).toEqual(m("get"));
    for (const step of ["getOtherOrgCtx", "getMissing"]) expect(r(step), step).toMatchObject(fail(Code.NotFound));

    expect(m("patched")).toEqual({ details: details("2") });
    expect(m("patchNothing")).toEqual({ details: { ...details("2"), changeDate: m("patched").details.changeDate } });
    expect(r("patchInvalid")).toMatchObject(fail(Code.InvalidArgument));
    expect(r("patchWrongKind")).toMatchObject(fail(Code.FailedPrecondition));
    // Already NONE: nothing changes.
    expect(m("patchToNone")).toEqual({ details: { ...details("1", ids.pub), changeDate: m("createdPublic").details.changeDate } });
    expect(m("patchToPost")).toEqual({ details: details("2", ids.pub), clientSecret: expect.stringMatching(SECRET) });
    expect(m("regenerated")).toEqual({ details: details("3", ids.pub), clientSecret: expect.stringMatching(SECRET) });
    expect(regenerated).not.toBe(postSecret);
    expect(hashAfterRegenerate).toBe(hashToken(regenerated));
    expect(m("backToNone")).toEqual({ details: details("4", ids.pub) });
    expect(r("regenerateNone")).toMatchObject(fail(Code.FailedPrecondition));

    expect(m("ownerGet").app.details).toMatchObject({ id: ids.app, sequence: "2" });
    expect(m("ownerSearch").result.map((x: Msg) => x.app.name)).toEqual(["mxga Api", "mxga Public", "mxga Renamed"]);
    expect(m("ownerSearch").sortingColumn).toBe("APP_FIELD_NAME_NAME");
    expect(r("ownerCreateForeign")).toMatchObject(fail(Code.PermissionDenied));
    expect(m("ownerPatch")).toEqual({ details: details("2", ids.api) });
    expect(m("viewerGet").app).toMatchObject({ app: { name: "mxga Api 2", api: { authMethodType: API_BASIC } }, hasSecret: true });
    expect(r("viewerPatch")).toMatchObject(fail(Code.PermissionDenied));
    expect(r("unauthenticated")).toMatchObject(fail(Code.Unauthenticated));

    expect(m("deactivated")).toEqual({ details: details("3") });
    expect(r("deactivateAgain")).toMatchObject(fail(Code.FailedPrecondition));
    expect(m("searchInactive").result.map((x: Msg) => x.details.id)).toEqual([ids.app]);
    expect(m("reactivated")).toEqual({ details: details("4") });
    expect(r("reactivateAgain")).toMatchObject(fail(Code.FailedPrecondition));
    expect(m("searchByClientId").result.map((x: Msg) => x.details.id)).toEqual([ids.app]);
    expect(r("searchLimitTooHigh")).toMatchObject(fail(Code.InvalidArgument));
    expect(m("afterChanges").app).toEqual({
      details: details("4"),
      projectId: ids.project,
      app: { name: "mxga Renamed", oidc: oidcDefaults({ redirectUris: ["https://mx.example/cb"], devMode: true }) },
      clientId,
      state: ACTIVE,
      hasSecret: true,
    });

    expect(m("deleted")).toEqual({ details: details("5") });
    for (const step of ["getDeleted", "deleteAgain", "goneWithProject"]) expect(r(step), step).toMatchObject(fail(Code.NotFound));
    expect(m("nameFreeAgain")).toEqual({ details: details("1", ids.recreated), clientId: expect.stringMatching(CLIENT_ID) });

    // No secret of any protocol's run is in any event.
    const payloads = (await server.service.store.db.selectFrom("events").select("payload").execute()).map((e) => JSON.stringify(e.payload)).join("\n");
    for (const [protocol, { secrets }] of byProtocol) {
      expect(secrets.length, protocol).toBe(4);
      for (const s of secrets) expect(payloads.includes(s), protocol).toBe(false);
    }

    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparable(withoutVolatile(v.result), ids, { prefix: "mx" })]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(withoutVolatile(result), theirs, { prefix: "mx" }), `${protocol} ${step}`).toEqual(reference[step]);
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
    const org = await createOrg(server.baseUrl, server.adminToken, "Apps Rest Raw Org");
    const project = await createProject(server.baseUrl, server.adminToken, "Rest Raw", org);
    const plain = await server.createUser({});

    const created = await rest(`/projects/${project}/apps`, {
      method: "POST",
      body: JSON.stringify({ name: "Raw", oidc: { redirectUris: ["https://raw.example/cb"], responseTypes: ["OIDC_RESPONSE_TYPE_CODE"] } }),
    });
    expect(created.status).toBe(201);
    const made = (await created.json()) as Msg;
    expect(made).toEqual({
      details: { id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(org) },
      clientId: expect.stringMatching(CLIENT_ID),
      clientSecret: expect.stringMatching(SECRET),
    });
    const id = made.details.id as string;
    await check(await rest(`/projects/${project}/apps`, { method: "POST", body: JSON.stringify({ name: "RAW", api: {} }) }), 409, Code.AlreadyExists);
    await check(await rest(`/projects/${project}/apps`, { method: "POST", body: JSON.stringify({ name: "Raw 2" }) }), 400, Code.InvalidArgument);
    await check(await rest(`/projects/no-such-project/apps`, { method: "POST", body: JSON.stringify({ name: "Raw 3", api: {} }) }), 404, Code.NotFound);
    await check(await rest("/apps/no-such-app"), 404, Code.NotFound);
    await check(await rest(`/apps/${id}`, { token: plain.token }), 403, Code.PermissionDenied);
    await check(await rest(`/apps/${id}`, { token: "" }), 401, Code.Unauthenticated);

    const got = await rest(`/apps/${id}`);
    expect(got.status).toBe(200);
    const body = (await got.json()) as Msg;
    expect(body.app).toMatchObject({
      projectId: project,
      clientId: made.clientId,
      state: ACTIVE,
      hasSecret: true,
      app: { name: "Raw", oidc: { redirectUris: ["https://raw.example/cb"] } },
    });
    expect(JSON.stringify(body)).not.toContain(made.clientSecret);

    const patched = await rest(`/apps/${id}`, {
      method: "PATCH",
      body: JSON.stringify({ name: "Raw Renamed", oidc: { authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" } }),
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Msg).details.sequence).toBe("2");
    const toPost = await rest(`/apps/${id}`, { method: "PATCH", body: JSON.stringify({ oidc: { authMethodType: "OIDC_AUTH_METHOD_TYPE_POST" } }) });
    expect(toPost.status).toBe(200);
    expect((await toPost.json()) as Msg).toEqual({ details: expect.objectContaining({ sequence: "3" }), clientSecret: expect.stringMatching(SECRET) });
    await check(await rest(`/apps/${id}`, { method: "PATCH", body: JSON.stringify({ api: {} }) }), 400, Code.FailedPrecondition);

    const regen = await rest(`/apps/${id}/_regenerate_secret`, { method: "POST" });
    expect(regen.status).toBe(200);
    const secret = ((await regen.json()) as Msg).clientSecret as string;
    expect(secret).toMatch(SECRET);
    expect((await appRow(server, id))!.secret_hash).toBe(hashToken(secret));

    expect((await rest(`/apps/${id}/_deactivate`, { method: "POST" })).status).toBe(200);
    await check(await rest(`/apps/${id}/_deactivate`, { method: "POST" }), 400, Code.FailedPrecondition);
    expect((await rest(`/apps/${id}/_reactivate`, { method: "POST" })).status).toBe(200);
    await check(await rest(`/apps/${id}/_reactivate`, { method: "POST" }), 400, Code.FailedPrecondition);

    const searched = await rest("/apps/_search", { method: "POST", body: JSON.stringify([{ projectId: { projectId: project } }]) });
    expect(searched.status).toBe(200);
    const found = (await searched.json()) as Msg;
    expect(found.result.map((x: Msg) => x.app.name)).toEqual(["Raw Renamed"]);
    const inOrg = await rest(`/apps/_search?ctx.orgId=${org}&sortingColumn=APP_FIELD_NAME_NAME`, { method: "POST", body: JSON.stringify([]) });
    expect(inOrg.status).toBe(200);
    expect(((await inOrg.json()) as Msg).result.map((x: Msg) => x.details.id)).toEqual([id]);

    const deleted = await rest(`/apps/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as Msg).details.sequence).toBe("7");
    await check(await rest(`/apps/${id}`), 404, Code.NotFound);
    await check(await rest(`/apps/${id}`, { method: "DELETE" }), 404, Code.NotFound);
  });
});
