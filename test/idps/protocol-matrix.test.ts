import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, DEACTIVATE, INACTIVE, INHERIT, createOrg, instanceOwner, orgOwner } from "./helpers.js";

type Step = { result: CallResult; status: number };

describe.each(DATABASE_KINDS)("every PlatformIdentityProviders RPC kind over every protocol (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** The same scenario once per protocol, each with its own organization, providers and owner. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const client = protocolClient(PlatformIdentityProviders, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    const run = async (step: string, status: number, method: string, req: JsonObject, token: string = server.adminToken) => {
      const result = await client.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const org = await createOrg(server.baseUrl, server.adminToken, `mx${t} Org`);
    const owner = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER"] }] });
    const secret = `mx${t}-matrix-secret`;

    const id: string = okMessage(
      await run("create", 201, "CreateGitLabIDP", {
        idp: { idp: { name: `mx${t} GitLab` }, config: { clientId: `mx${t}-id`, clientSecret: secret, scopes: ["openid"] } },
      }),
    ).details.id;
    const orgIdp: string = okMessage(
      await run("createInOrg", 201, "CreateOIDCIDP", {
        ctx: { orgId: org },
        idp: { idp: { name: `mx${t} OIDC` }, config: { clientId: "oidc", clientSecret: secret, issuer: `https://mx${t}.example.com`, isIdTokenMapping: true } },
      }),
    ).details.id;
    await run("createInvalid", 400, "CreateGitLabIDP", { idp: { idp: { name: `mx${t} bad` }, config: { clientId: "x" } } });
    await run("get", 200, "GetGitLabIDP", { id });
    await run("getWrongType", 404, "GetOIDCIDP", { id });
    await run("getInOrg", 200, "GetIDP", { id, ctx: { orgId: org } });
    await run("patchConfigInOrg", 400, "PatchGitLabIDP", { id, ctx: { orgId: org }, idp: { config: { clientId: "nope" } } });
    await run("ownerNoCtx", 403, "GetIDP", { id }, owner.token);
    await run("ownerDeactivates", 200, "PatchGitLabIDP", { id, ctx: { orgId: org }, idp: { idp: { statePolicy: DEACTIVATE } } }, owner.token);
    await run("getInOrgAfter", 200, "GetGitLabIDP", { id, ctx: { orgId: org } }, owner.token);
    await run("patchUnspecified", 400, "PatchGitLabIDP", { id, idp: { idp: { statePolicy: "STATE_POLICY_UNSPECIFIED" } } });
    await run("patchOwner", 200, "PatchGitLabIDP", { id, idp: { idp: { name: `mx${t} GitLab 2` }, config: { scopes: ["openid", "email"] } } });
    await run("patchNothing", 200, "PatchGitLabIDP", { id, idp: { idp: { name: `mx${t} GitLab 2` }, config: { scopes: [] } } });
    await run("search", 200, "SearchIDPs", {
      ctx: { orgId: org },
      sortingColumn: "IDP_FIELD_NAME_NAME",
      query: { asc: true },
      filters: [{ name: { name: `mx${t}`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });
    await run("searchInactive", 200, "SearchIDPs", {
      ctx: { orgId: org },
      filters: [{ state: { state: INACTIVE } }, { name: { name: `mx${t}`, method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });
    await run("searchLimit", 400, "SearchIDPs", { query: { limit: 1001 } });
    await run("deleteInOrg", 400, "DeleteIDP", { id, ctx: { orgId: org } });
    await run("delete", 200, "DeleteIDP", { id });
    await run("getDeleted", 404, "GetIDP", { id });
    await run("deleteOrgIdp", 200, "DeleteIDP", { id: orgIdp }, owner.token);
    await run("unauthenticated", 401, "SearchIDPs", {}, "");
    return { steps, ids: { idp: id, orgIdp, org, instance: server.instanceId }, secret };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const m = (step: string): Msg => okMessage(r(step));
    const inst = instanceOwner(server.instanceId);

    expect(m("create")).toEqual({ details: { id: ids.idp, sequence: "1", changeDate: expect.any(String), resourceOwner: inst } });
    expect(m("createInOrg").details).toMatchObject({ id: ids.orgIdp, sequence: "1", resourceOwner: orgOwner(ids.org!) });
    expect(r("createInvalid")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(m("get")).toEqual({
      idp: {
        details: { id: ids.idp, sequence: "1", changeDate: m("create").details.changeDate, resourceOwner: inst },
        state: ACTIVE,
        type: "PROVIDER_TYPE_GITLAB",
        idp: { idp: { name: "mxga GitLab", statePolicy: INHERIT, options: {} }, config: { clientId: "mxga-id", scopes: ["openid"] } },
      },
    });
    expect(r("getWrongType")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(m("getInOrg").idp).toMatchObject({ parent: { parent: inst, state: ACTIVE }, state: ACTIVE, idp: { statePolicy: INHERIT } });
    expect(r("patchConfigInOrg")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(r("ownerNoCtx")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(m("getInOrgAfter").idp).toMatchObject({ parent: { parent: inst, state: ACTIVE }, state: INACTIVE, idp: { idp: { statePolicy: DEACTIVATE } } });
    expect(r("patchUnspecified")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(m("patchOwner").details).toMatchObject({ id: ids.idp, sequence: "2", resourceOwner: inst });
    expect(m("patchNothing").details).toEqual(m("patchOwner").details);
    expect(m("search").result.map((x: Msg) => [x.idp.name, x.state, x.type])).toEqual([
      ["mxga GitLab 2", INACTIVE, "PROVIDER_TYPE_GITLAB"],
      ["mxga OIDC", ACTIVE, "PROVIDER_TYPE_OIDC"],
    ]);
    expect(m("searchInactive").result.map((x: Msg) => x.details.id)).toEqual([ids.idp]);
    expect(r("searchLimit")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(r("deleteInOrg")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(m("delete").details).toMatchObject({ id: ids.idp, sequence: "3", resourceOwner: inst });
    expect(r("getDeleted")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(m("deleteOrgIdp").details).toMatchObject({ id: ids.orgIdp, resourceOwner: orgOwner(ids.org!) });
    expect(r("unauthenticated")).toMatchObject({ ok: false, code: Code.Unauthenticated });

    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparable(v.result, ids, { prefix: "mx" })]));
    for (const [protocol, { steps, ids: theirs, secret }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparable(result, theirs, { prefix: "mx" }), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
        expect(JSON.stringify(result), `${protocol} ${step}`).not.toContain(secret);
      }
    }
  });
});
