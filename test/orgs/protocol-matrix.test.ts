import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

type Step = { result: CallResult; status: number };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = any;

const msg = (r: CallResult): Msg => {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
};

/**
 * Organization sequences are kept (each protocol has its own organization, so they agree);
 * the instance's sequence (SetAsInstanceDefault) moves with every protocol's scenario.
 */
const comparableStep = (step: string, result: CallResult, ids: Record<string, string>) =>
  comparable(result, ids, { prefix: "mx", alsoVolatile: step.startsWith("setDefault") ? ["sequence"] : [] });

describe.each(DATABASE_KINDS)("every PlatformOrganizations and PlatformDomains RPC over every protocol (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  /** Runs the same scenario once per protocol, each on its own organization, domains and owner. */
  async function scenario(protocol: Protocol) {
    const t = PROTOCOL_TOKEN[protocol];
    const orgs = protocolClient(PlatformOrganizations, protocol, server.baseUrl);
    const domains = protocolClient(PlatformDomains, protocol, server.baseUrl);
    const steps: Record<string, Step> = {};
    /** Runs one call and records it with the REST status it must have. */
    const run = async (step: string, status: number, client: typeof orgs, method: string, req: JsonObject, token: string | undefined = server.adminToken) => {
      const result = await client.call(method, req, token);
      steps[step] = { result, status };
      return result;
    };
    const o = (step: string, status: number, method: string, req: JsonObject, token?: string) =>
      run(step, status, orgs, method, req, token ?? server.adminToken);
    const d = (step: string, status: number, method: string, req: JsonObject, token?: string) =>
      run(step, status, domains, method, req, token ?? server.adminToken);

    // A user of the instance (in the default organization) who becomes the new organization's owner.
    const owner = await server.createUser({});
    const name = `mx${t} Org`;
    const created = msg(await o("created", 201, "CreateOrganization", { organization: { name, admins: [owner.userId] } }));
    const id: string = created.details.id;
    const generated = `mx${t}-org.localhost`;
    const added = `mx${t}.matrix.example`;
    const upper = `Upper.MX${t.toUpperCase()}.Matrix.Example`;
    const viaDomainCtx = `ctx.mx${t}.matrix.example`;

    await o("get", 200, "GetOrganization", { id });
    await o("getDefault", 200, "GetInstanceDefault", {});
    await o("getDefaultOrg", 200, "GetOrganization", { id: server.defaultOrgId });
    await o("search", 200, "SearchOrganizations", { filters: [{ name: { name: name.toUpperCase(), method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] });
    await o("searchByDomain", 200, "SearchOrganizations", { filters: [{ domain: { domain: generated } }] });
    await o("ownerGet", 200, "GetOrganization", { id }, owner.token);
    await o("ownerGetDefault", 403, "GetOrganization", { id: server.defaultOrgId }, owner.token);
    await o("ownerSearch", 200, "SearchOrganizations", {}, owner.token);
    await o("createDuplicate", 409, "CreateOrganization", { organization: { name: name.toLowerCase() } });
    await o("createUnknownAdmin", 404, "CreateOrganization", { organization: { name: `mx${t} Ghost`, admins: ["no-such-user"] } });
    await o("getUnknownAdminOrg", 200, "SearchOrganizations", { filters: [{ name: { name: `mx${t} Ghost` } }] });
    await o("orgCtxRefused", 400, "GetOrganization", { id, ctx: { orgId: id } });

    await o("patched", 200, "PatchOrganization", { id, organization: { name: `mx${t} Org Renamed` } });
    await o("patchSame", 200, "PatchOrganization", { id, organization: { name: `mx${t} Org Renamed` } });
    await o("patchNothing", 200, "PatchOrganization", { id, organization: {} });
    await o("patchOntoDefault", 409, "PatchOrganization", { id, organization: { name: "DEFAULT" } });
    await o("patchMissing", 404, "PatchOrganization", { id: "no-such-org", organization: { name: "x" } });
    await o("afterPatch", 200, "GetOrganization", { id });

    await d("addDomain", 201, "AddDomain", { domain: { domain: added }, ctx: { orgId: id } });
    await d("addUpper", 201, "AddDomain", { domain: { domain: upper }, ctx: { orgId: id } });
    await d("addByDomainCtx", 201, "AddDomain", { domain: { domain: viaDomainCtx }, ctx: { orgDomain: generated.toUpperCase() } });
    await d("addAgainOtherCase", 409, "AddDomain", { domain: { domain: added.toUpperCase() }, ctx: { orgId: id } });
    await d("addToDefaultTaken", 409, "AddDomain", { domain: { domain: added } });
    await d("addToUnknownOrg", 404, "AddDomain", { domain: { domain: `other.mx${t}.example` }, ctx: { orgId: "no-such-org" } });
    await d("searchDomains", 200, "SearchDomains", { ctx: { orgId: id }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN", query: { asc: true } });
    await d("searchUnverified", 200, "SearchDomains", {
      filters: [{ domain: { domain: `mx${t}.`, method: "TEXT_FILTER_METHOD_CONTAINS" } }, { verified: { isVerified: false } }],
    });
    await d("ownerSearchDomains", 200, "SearchDomains", {}, owner.token);
    await d("ownerAddToDefault", 403, "AddDomain", { domain: { domain: `denied.mx${t}.example` } }, owner.token);
    await o("afterAdd", 200, "GetOrganization", { id });

    await d("setPrimary", 200, "SetAsPrimary", { domain: added.toUpperCase() });
    await d("setPrimaryAgain", 200, "SetAsPrimary", { domain: added });
    await d("setPrimaryMissing", 404, "SetAsPrimary", { domain: `missing.mx${t}.example` });
    await d("setPrimaryWrongOrg", 404, "SetAsPrimary", { domain: generated, ctx: { orgId: server.defaultOrgId } });
    await d("deletePrimary", 400, "DeleteDomain", { domain: added });
    await d("deleteOldGeneratedPrimaryWrongOrg", 404, "DeleteDomain", { domain: generated, ctx: { orgId: server.defaultOrgId } });
    await d("deleteDomain", 200, "DeleteDomain", { domain: upper, ctx: { orgId: id } });
    await d("deleteDomainAgain", 404, "DeleteDomain", { domain: upper });
    await o("afterDomains", 200, "GetOrganization", { id });
    await d("searchAfterDomains", 200, "SearchDomains", { ctx: { orgId: id }, sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN", query: { asc: true } });

    await o("deactivated", 200, "DeactivateOrganization", { id });
    await o("deactivateAgain", 400, "DeactivateOrganization", { id });
    await o("setDefaultInactive", 400, "SetAsInstanceDefault", { id });
    await o("afterDeactivate", 200, "GetOrganization", { id });
    await o("searchInactive", 200, "SearchOrganizations", { filters: [{ state: { state: "ORGANIZATION_STATE_INACTIVE" } }, { inIds: { ids: [id] } }] });
    await o("reactivated", 200, "ReactivateOrganization", { id });
    await o("reactivateAgain", 400, "ReactivateOrganization", { id });
    await o("deactivateMissing", 404, "DeactivateOrganization", { id: "no-such-org" });

    await o("setDefault", 200, "SetAsInstanceDefault", { id });
    await o("setDefaultAgain", 200, "SetAsInstanceDefault", { id });
    await o("getDefaultAfterSet", 200, "GetInstanceDefault", {});
    await o("deleteDefault", 400, "DeleteOrganization", { id });
    await o("deactivateDefault", 400, "DeactivateOrganization", { id });
    await o("oldDefault", 200, "GetOrganization", { id: server.defaultOrgId });
    await o("setDefaultBack", 200, "SetAsInstanceDefault", { id: server.defaultOrgId });
    await o("setDefaultMissing", 404, "SetAsInstanceDefault", { id: "no-such-org" });

    await o("deleted", 200, "DeleteOrganization", { id });
    await o("getDeleted", 404, "GetOrganization", { id });
    await o("deleteAgain", 404, "DeleteOrganization", { id });
    await o("patchDeleted", 404, "PatchOrganization", { id, organization: { name: "gone" } });
    await o("reactivateDeleted", 404, "ReactivateOrganization", { id });
    await d("searchDomainsOfDeleted", 200, "SearchDomains", { filters: [{ domain: { domain: `mx${t}`, method: "TEXT_FILTER_METHOD_CONTAINS" } }] });
    await d("addToDeletedCtx", 404, "AddDomain", { domain: { domain: `late.mx${t}.example` }, ctx: { orgId: id } });
    await o("nameFreeAgain", 201, "CreateOrganization", { organization: { name } });

    await o("invalid", 400, "CreateOrganization", { organization: { name: "" } });
    await d("invalidDomain", 400, "AddDomain", { domain: { domain: "not a host" } });
    await o("unauthenticated", 401, "GetOrganization", { id: server.defaultOrgId }, "");
    await d("unauthenticatedDomains", 401, "SearchDomains", {}, "");
    return { steps, ids: { org: id, owner: owner.userId, recreated: msg(steps.nameFreeAgain!.result).details.id as string } };
  }

  it("gives the same results and codes on gRPC, gRPC-web, Connect (HTTP/1.1 and HTTP/2) and REST", async () => {
    const byProtocol = new Map<Protocol, Awaited<ReturnType<typeof scenario>>>();
    for (const protocol of PROTOCOLS) byProtocol.set(protocol, await scenario(protocol));

    const { steps: g, ids } = byProtocol.get("grpc")!;
    const r = (step: string) => g[step]!.result;
    const instanceOwner = { type: "OWNER_TYPE_INSTANCE", id: server.instanceId };
    const orgOwner = { type: "OWNER_TYPE_ORG", id: ids.org };

    // Creation: details owned by the instance, the generated domain, three events (added, domain, primary).
    expect(msg(r("created"))).toEqual({
      details: { id: ids.org, sequence: "3", changeDate: expect.any(String), resourceOwner: instanceOwner },
      primaryDomain: "mxga-org.localhost",
    });
    expect(msg(r("get"))).toEqual({
      organization: {
        details: { id: ids.org, sequence: "3", changeDate: msg(r("created")).details.changeDate, resourceOwner: instanceOwner },
        name: "mxga Org",
        state: "ORGANIZATION_STATE_ACTIVE",
        primaryDomain: "mxga-org.localhost",
      },
    });
    expect(msg(r("getDefault"))).toMatchObject({
      organization: {
        details: { id: server.defaultOrgId, resourceOwner: instanceOwner },
        name: "Default",
        primaryDomain: "default.localhost",
        isDefault: true,
      },
    });
    expect(msg(r("getDefaultOrg"))).toEqual(msg(r("getDefault")));
    expect(msg(r("search")).result.map((o: Msg) => o.details.id)).toEqual([ids.org]);
    expect(msg(r("search")).details).toMatchObject({ totalResult: "1", endOfList: true, appliedLimit: 100 });
    expect(msg(r("searchByDomain")).result.map((o: Msg) => o.details.id)).toEqual([ids.org]);
    expect(msg(r("ownerSearch")).result.map((o: Msg) => o.details.id)).toEqual([ids.org]);
    expect(r("ownerGetDefault")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(r("createDuplicate")).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect(r("createUnknownAdmin")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(msg(r("getUnknownAdminOrg")).result ?? []).toEqual([]);
    expect(r("orgCtxRefused")).toMatchObject({ ok: false, code: Code.InvalidArgument });

    // Patch: a change is one event; the same name or nothing keeps the sequence; onto another name (any case) is taken.
    expect(msg(r("patched")).details).toMatchObject({ id: ids.org, sequence: "4", resourceOwner: instanceOwner });
    expect(msg(r("patchSame")).details).toMatchObject({ id: ids.org, sequence: "4" });
    expect(msg(r("patchNothing")).details).toMatchObject({ id: ids.org, sequence: "4" });
    expect(r("patchOntoDefault")).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect(r("patchMissing")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(msg(r("afterPatch")).organization).toMatchObject({ details: { sequence: "4" }, name: "mxga Org Renamed", primaryDomain: "mxga-org.localhost" });

    // Domains: events of the organization, lower-cased, owned by the organization, one organization each.
    expect(msg(r("addDomain"))).toEqual({ details: { id: "mxga.matrix.example", sequence: "5", changeDate: expect.any(String), resourceOwner: orgOwner } });
    expect(msg(r("addUpper")).details).toMatchObject({ id: "upper.mxga.matrix.example", sequence: "6", resourceOwner: orgOwner });
    expect(msg(r("addByDomainCtx")).details).toMatchObject({ id: "ctx.mxga.matrix.example", sequence: "7", resourceOwner: orgOwner });
    expect(r("addAgainOtherCase")).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect(r("addToDefaultTaken")).toMatchObject({ ok: false, code: Code.AlreadyExists });
    expect(r("addToUnknownOrg")).toMatchObject({ ok: false, code: Code.NotFound });
    const domainRow = (domain: string, extra: JsonObject = {}) => ({
      details: { id: domain, sequence: expect.any(String), changeDate: expect.any(String), resourceOwner: orgOwner },
      domain,
      ...extra,
    });
    expect(msg(r("searchDomains"))).toMatchObject({
      details: { totalResult: "4", endOfList: true },
      sortingColumn: "DOMAIN_FIELD_NAME_DOMAIN",
    });
    expect(msg(r("searchDomains")).result).toEqual([
      domainRow("ctx.mxga.matrix.example"),
      domainRow("mxga-org.localhost", { isPrimary: true, isVerified: true, isGenerated: true }),
      domainRow("mxga.matrix.example"),
      domainRow("upper.mxga.matrix.example"),
    ]);
    expect(
      msg(r("searchUnverified"))
        .result.map((x: Msg) => x.domain)
        .sort(),
    ).toEqual(["ctx.mxga.matrix.example", "mxga.matrix.example", "upper.mxga.matrix.example"]);
    expect(
      msg(r("ownerSearchDomains"))
        .result.map((x: Msg) => x.domain)
        .sort(),
    ).toEqual(["ctx.mxga.matrix.example", "mxga-org.localhost", "mxga.matrix.example", "upper.mxga.matrix.example"]);
    expect(r("ownerAddToDefault")).toMatchObject({ ok: false, code: Code.PermissionDenied });
    expect(msg(r("afterAdd")).organization.details.sequence).toBe("7");

    expect(msg(r("setPrimary")).details).toMatchObject({ id: "mxga.matrix.example", sequence: "8", resourceOwner: orgOwner });
    expect(msg(r("setPrimaryAgain")).details).toMatchObject({ id: "mxga.matrix.example", sequence: "8" });
    expect(r("setPrimaryMissing")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(r("setPrimaryWrongOrg")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(r("deletePrimary")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(r("deleteOldGeneratedPrimaryWrongOrg")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(msg(r("deleteDomain")).details).toMatchObject({ id: "upper.mxga.matrix.example", sequence: "9", resourceOwner: orgOwner });
    expect(r("deleteDomainAgain")).toMatchObject({ ok: false, code: Code.NotFound });
    expect(msg(r("afterDomains")).organization).toMatchObject({ details: { sequence: "9" }, primaryDomain: "mxga.matrix.example" });
    expect(msg(r("searchAfterDomains")).result).toEqual([
      domainRow("ctx.mxga.matrix.example"),
      domainRow("mxga-org.localhost", { isVerified: true, isGenerated: true }),
      domainRow("mxga.matrix.example", { isPrimary: true }),
    ]);

    // Lifecycle.
    expect(msg(r("deactivated")).details).toMatchObject({ id: ids.org, sequence: "10", resourceOwner: instanceOwner });
    expect(r("deactivateAgain")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(r("setDefaultInactive")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(msg(r("afterDeactivate")).organization).toMatchObject({ state: "ORGANIZATION_STATE_INACTIVE", details: { sequence: "10" } });
    expect(msg(r("searchInactive")).result.map((o: Msg) => o.details.id)).toEqual([ids.org]);
    expect(msg(r("reactivated")).details).toMatchObject({ sequence: "11" });
    expect(r("reactivateAgain")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(r("deactivateMissing")).toMatchObject({ ok: false, code: Code.NotFound });

    // The instance's default: SetAsInstanceDefault answers with the instance's details.
    const setDefault = msg(r("setDefault")).details;
    expect(setDefault).toMatchObject({ id: server.instanceId, resourceOwner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(msg(r("setDefaultAgain")).details).toEqual(setDefault);
    expect(msg(r("getDefaultAfterSet")).organization).toMatchObject({ details: { id: ids.org }, isDefault: true });
    expect(r("deleteDefault")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(r("deactivateDefault")).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(msg(r("oldDefault")).organization).not.toHaveProperty("isDefault");
    expect(BigInt(msg(r("setDefaultBack")).details.sequence)).toBe(BigInt(setDefault.sequence) + 1n);
    expect(r("setDefaultMissing")).toMatchObject({ ok: false, code: Code.NotFound });

    // Deletion.
    expect(msg(r("deleted")).details).toMatchObject({ id: ids.org, sequence: "12", resourceOwner: instanceOwner });
    for (const step of ["getDeleted", "deleteAgain", "patchDeleted", "reactivateDeleted", "addToDeletedCtx"]) {
      expect(r(step), step).toMatchObject({ ok: false, code: Code.NotFound });
    }
    expect(msg(r("searchDomainsOfDeleted")).result ?? []).toEqual([]);
    expect(msg(r("nameFreeAgain"))).toMatchObject({ details: { sequence: "3" }, primaryDomain: "mxga-org.localhost" });
    expect(ids.recreated).not.toBe(ids.org);
    expect(r("invalid")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(r("invalidDomain")).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(r("unauthenticated")).toMatchObject({ ok: false, code: Code.Unauthenticated });
    expect(r("unauthenticatedDomains")).toMatchObject({ ok: false, code: Code.Unauthenticated });

    const reference = Object.fromEntries(Object.entries(g).map(([k, v]) => [k, comparableStep(k, v.result, ids)]));
    for (const [protocol, { steps, ids: theirs }] of byProtocol) {
      expect(Object.keys(steps), protocol).toEqual(Object.keys(g));
      for (const [step, { result, status }] of Object.entries(steps)) {
        expect(comparableStep(step, result, theirs), `${protocol} ${step}`).toEqual(reference[step]);
        if (protocol === "rest") expect(result.httpStatus, `rest ${step}: ${JSON.stringify(result)}`).toBe(status);
      }
    }
  });

  it("answers REST errors as rpcStatus bodies with the matching HTTP status", async () => {
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/resources/v3alpha${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", ...init.headers },
      });
    const check = async (res: Response, status: number, code: Code) => {
      expect(res.status).toBe(status);
      const body = (await res.json()) as JsonObject;
      expect(Object.keys(body).sort()).toEqual(["code", "details", "message"]);
      expect(body.code).toBe(code);
    };
    await check(await rest("/organizations/no-such-org"), 404, Code.NotFound);
    await check(await rest("/organizations", { method: "POST", body: JSON.stringify({ name: "default" }) }), 409, Code.AlreadyExists);
    await check(await rest(`/organizations/${server.defaultOrgId}/_deactivate`, { method: "POST" }), 400, Code.FailedPrecondition);
    await check(await rest(`/organizations/${server.defaultOrgId}`, { method: "DELETE" }), 400, Code.FailedPrecondition);
    await check(await rest("/domains/default.localhost", { method: "DELETE" }), 400, Code.FailedPrecondition);
    await check(await rest("/domains", { method: "POST", body: JSON.stringify({ domain: "x..com" }) }), 400, Code.InvalidArgument);
    await check(await rest("/domains", { method: "POST", body: JSON.stringify({ domain: "default.localhost" }) }), 409, Code.AlreadyExists);
    await check(await rest("/domains/nothing.example/_set_primary", { method: "POST" }), 404, Code.NotFound);

    const created = await rest("/organizations", { method: "POST", body: JSON.stringify({ name: "Rest Raw" }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as Msg).details.id as string;
    const byDefault = await rest("/organizations/_default");
    expect(byDefault.status).toBe(200);
    expect(((await byDefault.json()) as Msg).organization).toMatchObject({ details: { id: server.defaultOrgId }, isDefault: true });
    const added = await rest(`/domains?ctx.orgId=${id}`, { method: "POST", body: JSON.stringify({ domain: "Raw.Example" }) });
    expect(added.status).toBe(201);
    expect(((await added.json()) as Msg).details).toMatchObject({ id: "raw.example", resourceOwner: { type: "OWNER_TYPE_ORG", id } });
    const search = await rest("/organizations/_search?query.limit=1&sortingColumn=ORGANIZATION_FIELD_NAME_NAME&query.asc=true", {
      method: "POST",
      body: JSON.stringify([{ domain: { domain: "raw.example" } }]),
    });
    expect(search.status).toBe(200);
    expect(await search.json()).toMatchObject({
      details: { totalResult: "1", appliedLimit: 1 },
      sortingColumn: "ORGANIZATION_FIELD_NAME_NAME",
      result: [{ details: { id }, name: "Rest Raw" }],
    });
    const patched = await rest(`/organizations/${id}`, { method: "PATCH", body: JSON.stringify({ name: "Rest Raw 2" }) });
    expect(patched.status).toBe(200);
    expect((await rest(`/organizations/${id}/_set_default`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/organizations/${server.defaultOrgId}/_set_default`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/domains/raw.example/_set_primary`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/organizations/${id}/_deactivate`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/organizations/${id}/_reactivate`, { method: "POST" })).status).toBe(200);
    expect((await rest(`/domains/rest-raw.localhost`, { method: "DELETE" })).status).toBe(200);
    expect((await rest(`/organizations/${id}`, { method: "DELETE" })).status).toBe(200);
    await check(await rest(`/organizations/${id}`, { method: "DELETE" }), 404, Code.NotFound);
  });
});
