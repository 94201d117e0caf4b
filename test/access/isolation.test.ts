import { request as httpRequest } from "node:http";
import type { LookupFunction } from "node:net";
import { fromJson, toJson, type DescService, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformIdentityProviders } from "../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PROTOCOLS, restRequest, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { gitlab } from "../idps/helpers.js";
import { linkAccount } from "../users/idp-links.js";

/**
 * Isolation of instances for organizations, domains, users, memberships, sessions and notification
 * providers: on instance A (localhost), A's IAM_OWNER names B's organizations, domains, users,
 * tokens, keys, links, memberships and providers wherever an id fits, and everything of B is
 * NotFound or filtered out, never counted; the same the other way round. Domains, organization names and usernames are unique
 * per instance, so B's are free on A. Nothing B owns changes.
 */

const ORGS = PlatformOrganizations;
const DOMAINS = PlatformDomains;
const USERS = PlatformUsers;
const MEMBERS = PlatformMemberships;
const tomorrow = () => new Date(Date.now() + 24 * 3600_000).toISOString();
const B_HOST = "iso-b.example";

/** Resolves every host name to the test server's loopback address. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

interface Client {
  call(method: string, request: JsonObject, token?: string): Promise<CallResult>;
}

/** Calls an RPC at http://<host>:<port> whatever the host name, so that Host selects the instance. */
function hostClient(service: DescService, protocol: Protocol, baseUrl: string): Client {
  if (protocol === "rest") {
    const routes = routesOf([service]);
    return {
      async call(name, req, token) {
        const route = routes.find((r) => r.method.name === name)!;
        const { url, body } = restRequest(route, req, baseUrl);
        const headers: Record<string, string> = {
          ...(token && { authorization: `Bearer ${token}` }),
          ...(body !== undefined && { "content-type": "application/json" }),
        };
        const { status, json } = await new Promise<{ status: number; json: JsonObject }>((resolve, reject) => {
          const r = httpRequest(url, { method: route.httpMethod, lookup: toLoopback, headers }, (res) => {
            let text = "";
            res
              .setEncoding("utf8")
              .on("data", (c: string) => (text += c))
              .on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) as JsonObject }));
          });
          r.on("error", reject).end(body === undefined ? undefined : JSON.stringify(body));
        });
        if (status < 300) return { ok: true, message: json, httpStatus: status };
        return { ok: false, code: json.code as Code, message: String(json.message), httpStatus: status };
      },
    };
  }
  const nodeOptions = { lookup: toLoopback };
  const transport: Transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl, nodeOptions })
      : protocol === "grpc-web"
        ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1", nodeOptions })
        : protocol === "connect"
          ? createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions })
          : createConnectTransport({ baseUrl, httpVersion: "2", nodeOptions });
  const client = createClient(service, transport) as unknown as Record<string, (r: unknown, o: unknown) => Promise<unknown>>;
  return {
    async call(name, req, token) {
      const method = service.methods.find((m) => m.name === name)!;
      try {
        const output = await client[method.localName]!(fromJson(method.input, req), { headers: token ? { authorization: `Bearer ${token}` } : {} });
        return { ok: true, message: toJson(method.output, output as never) as JsonObject };
      } catch (error) {
        const e = ConnectError.from(error);
        return { ok: false, code: e.code, message: e.rawMessage };
      }
    },
  };
}

function expectNotFound(result: CallResult, label: string) {
  expect(result, label).toMatchObject({ ok: false, code: Code.NotFound });
  if (result.httpStatus !== undefined) expect(result.httpStatus, label).toBe(404);
}

async function must(r: Promise<CallResult>, what: string): Promise<JsonObject> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

const rowsOf = (m: JsonObject) => (m.result ?? []) as JsonObject[];
const idsOf = (m: JsonObject) => rowsOf(m).map((o) => String((o.details as JsonObject).id));
const domainsOf = (m: JsonObject) => rowsOf(m).map((d) => String(d.domain));
const totalOf = (m: JsonObject) => Number((m.details as JsonObject | undefined)?.totalResult ?? 0);
const equals = (value: string) => ({ domain: value, method: "TEXT_FILTER_METHOD_EQUALS" });
const userIdsOf = (m: JsonObject) => rowsOf(m).map((u) => String((u.details as JsonObject).id));
const membershipUsersOf = (m: JsonObject) => rowsOf(m).map((r) => String(r.userId));

describe.each(DATABASE_KINDS)("isolation of organizations and domains between instances (%s)", (kind) => {
  let server: TestServer;
  let b: Awaited<ReturnType<TestServer["createInstance"]>>;
  /** A's IAM_OWNER (no system membership: it cannot reach B through ctx either). */
  let ownerOfA: string;
  let aOrg: { id: string; primary: string };
  let bOrg: { id: string; primary: string };
  let bUserId: string;
  /** Every organization id and domain of B. */
  let bIds: string[];
  let bDomains: string[];
  let bBefore: JsonObject;
  /** B's admin, a person of B's organization (with a token, a key, memberships and a link to an external account), and its PAT and key ids. */
  let bAdminId: string;
  let bHumanId: string;
  let bPatId: string;
  let bKeyId: string;
  /** B's person's link: B's provider and the account there. */
  let bLink: { idpId: string; externalUserId: string };
  /** Every user id of B. */
  let bUserIds: string[];
  /** A user of A's organization, with a token, a key and a membership there. */
  let aUserId: string;
  let aPatId: string;
  let aKeyId: string;

  const onA = (service: DescService, protocol: Protocol) => hostClient(service, protocol, server.baseUrl);
  const onB = (service: DescService, protocol: Protocol) => hostClient(service, protocol, b.baseUrl);
  const asA = (service: DescService, method: string, req: JsonObject, protocol: Protocol = "grpc") => onA(service, protocol).call(method, req, ownerOfA);
  const asB = (service: DescService, method: string, req: JsonObject, protocol: Protocol = "grpc") => onB(service, protocol).call(method, req, b.adminToken);

  /** Everything of B its own admin can read. */
  async function stateOfB(): Promise<JsonObject> {
    return {
      orgs: await must(asB(ORGS, "SearchOrganizations", { query: { limit: 1000 } }), "B orgs"),
      domains: await must(asB(DOMAINS, "SearchDomains", { query: { limit: 1000 } }), "B domains"),
      default: await must(asB(ORGS, "GetInstanceDefault", {}), "B default"),
      org: await must(asB(ORGS, "GetOrganization", { id: bOrg.id }), "B org"),
      users: await must(asB(USERS, "SearchUsers", { query: { limit: 1000 } }), "B users"),
      memberships: await must(asB(MEMBERS, "SearchMemberships", { query: { limit: 1000 } }), "B memberships"),
      human: await must(asB(USERS, "GetUser", { id: bHumanId }), "B's person"),
      pats: await must(asB(USERS, "SearchPersonalAccessTokens", { id: bHumanId }), "B's person's tokens"),
      keys: await must(asB(USERS, "SearchKeys", { id: bUserId }), "B's machine's keys"),
      links: await must(asB(USERS, "ListIDPLinks", { id: bHumanId }), "B's person's links"),
    };
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    b = await server.createInstance(B_HOST);
    ownerOfA = (await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] })).token;
    const madeB = await must(asB(ORGS, "CreateOrganization", { organization: { name: "Iso Shared" } }), "B creates its org");
    bOrg = { id: String((madeB.details as JsonObject).id), primary: String(madeB.primaryDomain) };
    expect(bOrg.primary).toBe(`iso-shared.${B_HOST}`);
    for (const domain of ["shared.iso.example", "b-only.iso.example"]) {
      await must(asB(DOMAINS, "AddDomain", { domain: { domain }, ctx: { orgId: bOrg.id } }), `B adds ${domain}`);
    }
    bUserId = (await server.createUser({ instanceId: b.instanceId })).userId;
    const madeA = await must(asA(ORGS, "CreateOrganization", { organization: { name: "Iso A" } }), "A creates its org");
    aOrg = { id: String((madeA.details as JsonObject).id), primary: String(madeA.primaryDomain) };
    await must(asA(DOMAINS, "AddDomain", { domain: { domain: "a-only.iso.example" }, ctx: { orgId: aOrg.id } }), "A adds a-only");

    // Users, credentials and memberships on both sides.
    const bAdmins = await must(asB(MEMBERS, "SearchMemberships", { filters: [{ role: { role: "IAM_OWNER" } }] }), "B's admins");
    bAdminId = String(rowsOf(bAdmins)[0]!.userId);
    const human = { username: "iso-shared-user", human: { profile: { givenName: "Iso", familyName: "Person" }, email: { address: "iso@b.example" } } };
    bHumanId = String(((await must(asB(USERS, "CreateUser", { user: human, ctx: { orgId: bOrg.id } }), "B creates a person")).details as JsonObject).id);
    bPatId = String(
      ((await must(asB(USERS, "AddPersonalAccessToken", { id: bHumanId, pat: { expirationDate: tomorrow() } }), "B's PAT")).details as JsonObject).id,
    );
    bKeyId = String(
      ((await must(asB(USERS, "AddKey", { id: bUserId, key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() } }), "B's key")).details as JsonObject).id,
    );
    await must(asB(USERS, "GenerateSecret", { id: bUserId }), "B's secret");
    const bIdp = await must(asB(PlatformIdentityProviders, "CreateGitLabIDP", { idp: gitlab("Iso GitLab") }), "B's provider");
    bLink = { idpId: String((bIdp.details as JsonObject).id), externalUserId: "iso-external-1" };
    await linkAccount(server, b.instanceId, bHumanId, { ...bLink, username: "iso-external", email: "iso@b.example" });
    await must(
      asB(MEMBERS, "CreateMembership", { membership: { userId: bHumanId, roles: ["ORG_OWNER"] }, ctx: { orgId: bOrg.id } }),
      "B's person owns B's org",
    );
    await must(asB(MEMBERS, "CreateMembership", { membership: { userId: bUserId, roles: ["IAM_OWNER_VIEWER"] } }), "B's machine views B");
    aUserId = String(
      (
        (await must(asA(USERS, "CreateUser", { user: { username: "iso-a-user", machine: { name: "a" } }, ctx: { orgId: aOrg.id } }), "A creates a user"))
          .details as JsonObject
      ).id,
    );
    aPatId = String(
      ((await must(asA(USERS, "AddPersonalAccessToken", { id: aUserId, pat: { expirationDate: tomorrow() } }), "A's PAT")).details as JsonObject).id,
    );
    aKeyId = String(
      ((await must(asA(USERS, "AddKey", { id: aUserId, key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() } }), "A's key")).details as JsonObject).id,
    );
    await must(asA(MEMBERS, "CreateMembership", { membership: { userId: aUserId, roles: ["ORG_OWNER"] }, ctx: { orgId: aOrg.id } }), "A's user owns A's org");

    bBefore = await stateOfB();
    expect(rowsOf(bBefore.links as JsonObject)).toMatchObject([bLink]);
    bUserIds = userIdsOf(bBefore.users as JsonObject);
    expect(bUserIds.sort()).toEqual([bAdminId, bUserId, bHumanId].sort());
    expect(membershipUsersOf(bBefore.memberships as JsonObject).sort()).toEqual([bAdminId, bHumanId, bUserId].sort());
    bIds = idsOf(bBefore.orgs as JsonObject);
    bDomains = domainsOf(bBefore.domains as JsonObject);
    expect(bIds.sort()).toEqual([b.orgId, bOrg.id].sort());
    expect(bDomains).toEqual(expect.arrayContaining([bOrg.primary, "shared.iso.example", "b-only.iso.example"]));
  });
  afterAll(() => server?.close());

  it.each(PROTOCOLS)("B's organizations are NotFound on A to every RPC that takes an organization id, over %s", async (protocol) => {
    for (const id of [bOrg.id, b.orgId]) {
      const label = (rpc: string) => `${protocol} ${rpc} ${id === b.orgId ? "B's default" : "B's org"}`;
      expectNotFound(await asA(ORGS, "GetOrganization", { id }, protocol), label("Get"));
      expectNotFound(await asA(ORGS, "PatchOrganization", { id, organization: { name: "Stolen" } }, protocol), label("Patch"));
      expectNotFound(await asA(ORGS, "DeleteOrganization", { id }, protocol), label("Delete"));
      expectNotFound(await asA(ORGS, "DeactivateOrganization", { id }, protocol), label("Deactivate"));
      expectNotFound(await asA(ORGS, "ReactivateOrganization", { id }, protocol), label("Reactivate"));
      expectNotFound(await asA(ORGS, "SetAsInstanceDefault", { id }, protocol), label("SetAsInstanceDefault"));
    }
    const def = await must(asA(ORGS, "GetInstanceDefault", {}, protocol), "A's default");
    expect(String(((def.organization as JsonObject).details as JsonObject).id), protocol).toBe(server.defaultOrgId);
  });

  it.each(PROTOCOLS)("B's organizations and B itself are NotFound as ctx on A, over %s", async (protocol) => {
    const orgCtxs: JsonObject[] = [{ orgId: bOrg.id }, { orgId: b.orgId }, { orgDomain: bOrg.primary }, { orgDomain: "b-only.iso.example" }];
    for (const ctx of orgCtxs) {
      const label = (rpc: string) => `${protocol} ${rpc} ctx=${JSON.stringify(ctx)}`;
      expectNotFound(await asA(DOMAINS, "AddDomain", { domain: { domain: `ctx-${protocol}.iso.example` }, ctx }, protocol), label("AddDomain"));
      expectNotFound(await asA(DOMAINS, "SearchDomains", { ctx }, protocol), label("SearchDomains"));
      expectNotFound(await asA(DOMAINS, "DeleteDomain", { domain: "a-only.iso.example", ctx }, protocol), label("DeleteDomain"));
      expectNotFound(await asA(DOMAINS, "SetAsPrimary", { domain: "a-only.iso.example", ctx }, protocol), label("SetAsPrimary"));
    }
    for (const ctx of [{ instanceId: b.instanceId }, { instanceDomain: B_HOST }] as JsonObject[]) {
      const label = (rpc: string) => `${protocol} ${rpc} ctx=${JSON.stringify(ctx)}`;
      expectNotFound(await asA(ORGS, "CreateOrganization", { organization: { name: `Iso via ctx ${protocol}` }, ctx }, protocol), label("CreateOrganization"));
      expectNotFound(await asA(ORGS, "SearchOrganizations", { ctx }, protocol), label("SearchOrganizations"));
      expectNotFound(await asA(ORGS, "GetInstanceDefault", { ctx }, protocol), label("GetInstanceDefault"));
      expectNotFound(await asA(ORGS, "GetOrganization", { id: bOrg.id, ctx }, protocol), label("GetOrganization"));
      expectNotFound(await asA(DOMAINS, "AddDomain", { domain: { domain: `ctx-${protocol}.iso.example` }, ctx }, protocol), label("AddDomain"));
      expectNotFound(await asA(DOMAINS, "SearchDomains", { ctx }, protocol), label("SearchDomains"));
    }
    // Nothing was added anywhere, and A's own domain is still A's.
    const added = await must(asA(DOMAINS, "SearchDomains", { filters: [{ domain: equals(`ctx-${protocol}.iso.example`) }] }), "A searches");
    expect(rowsOf(added)).toEqual([]);
    const mine = await must(asA(DOMAINS, "SearchDomains", { filters: [{ domain: equals("a-only.iso.example") }] }), "A searches");
    expect(rowsOf(mine)).toMatchObject([{ details: { resourceOwner: { id: aOrg.id } } }]);
  });

  it.each(PROTOCOLS)("B's domains are NotFound on A, over %s", async (protocol) => {
    for (const domain of [bOrg.primary, "b-only.iso.example", "shared.iso.example", ...bDomains]) {
      expectNotFound(await asA(DOMAINS, "DeleteDomain", { domain }, protocol), `${protocol} DeleteDomain ${domain}`);
      expectNotFound(await asA(DOMAINS, "SetAsPrimary", { domain }, protocol), `${protocol} SetAsPrimary ${domain}`);
      expectNotFound(await asA(DOMAINS, "DeleteDomain", { domain, ctx: { orgId: aOrg.id } }, protocol), `${protocol} DeleteDomain ${domain} in A's org`);
      expectNotFound(
        await asA(DOMAINS, "GenerateDomainValidation", { domain, type: "DOMAIN_VALIDATION_TYPE_DNS" }, protocol),
        `${protocol} GenerateDomainValidation ${domain}`,
      );
      expectNotFound(await asA(DOMAINS, "ValidateDomain", { domain }, protocol), `${protocol} ValidateDomain ${domain}`);
      expectNotFound(await asA(DOMAINS, "ValidateDomain", { domain, ctx: { orgId: aOrg.id } }, protocol), `${protocol} ValidateDomain ${domain} in A's org`);
    }
  });

  it.each(PROTOCOLS)("searches on A leave B's rows out and never count them, over %s", async (protocol) => {
    const search = (req: JsonObject) => must(asA(ORGS, "SearchOrganizations", req, protocol), `${protocol} SearchOrganizations`);
    const byIds = await search({ filters: [{ inIds: { ids: bIds } }] });
    expect(rowsOf(byIds), "B's ids").toEqual([]);
    expect(totalOf(byIds), "B's ids").toBe(0);
    const mixed = await search({ filters: [{ inIds: { ids: [...bIds, aOrg.id] } }] });
    expect(idsOf(mixed)).toEqual([aOrg.id]);
    expect(totalOf(mixed)).toBe(1);
    const bFilters: JsonObject[] = [
      { name: { name: "Iso Shared", method: "TEXT_FILTER_METHOD_EQUALS" } },
      { domain: { domain: B_HOST, method: "TEXT_FILTER_METHOD_ENDS_WITH" } },
      { domain: equals("b-only.iso.example") },
    ];
    for (const filter of bFilters) {
      const found = await search({ filters: [filter] });
      expect(rowsOf(found), JSON.stringify(filter)).toEqual([]);
      expect(totalOf(found), JSON.stringify(filter)).toBe(0);
    }
    const all = await search({ query: { limit: 1000 } });
    expect(
      idsOf(all).filter((id) => bIds.includes(id)),
      "B's orgs among A's",
    ).toEqual([]);
    expect(idsOf(all)).toEqual(expect.arrayContaining([server.defaultOrgId, aOrg.id]));
    expect(totalOf(all), "the total is A's own count").toBe(rowsOf(all).length);
    expect(totalOf(await search({ query: { limit: 1 } })), "the total of a short page").toBe(rowsOf(all).length);

    const domains = (req: JsonObject) => must(asA(DOMAINS, "SearchDomains", req, protocol), `${protocol} SearchDomains`);
    const allDomains = await domains({ query: { limit: 1000 } });
    expect(
      domainsOf(allDomains).filter((d) => d.endsWith(`.${B_HOST}`) || d === "b-only.iso.example"),
      "B's domains among A's",
    ).toEqual([]);
    expect(totalOf(allDomains)).toBe(rowsOf(allDomains).length);
    expect(totalOf(await domains({ query: { limit: 1 } }))).toBe(rowsOf(allDomains).length);
    for (const filter of [
      { domain: { domain: B_HOST, method: "TEXT_FILTER_METHOD_ENDS_WITH" } },
      { domain: equals("b-only.iso.example") },
      { domain: equals(bOrg.primary) },
    ]) {
      const found = await domains({ filters: [filter] });
      expect(rowsOf(found), JSON.stringify(filter)).toEqual([]);
      expect(totalOf(found), JSON.stringify(filter)).toBe(0);
    }
  });

  it.each(PROTOCOLS)("CreateOrganization on A with B's user as admin is NotFound and leaves nothing behind, over %s", async (protocol) => {
    const name = `Iso Admins ${protocol}`;
    expectNotFound(await asA(ORGS, "CreateOrganization", { organization: { name, admins: [bUserId] } }, protocol), `${protocol} CreateOrganization`);
    const found = await must(asA(ORGS, "SearchOrganizations", { filters: [{ name: { name, method: "TEXT_FILTER_METHOD_EQUALS" } }] }), "search");
    expect(rowsOf(found)).toEqual([]);
    // Not even the generated domain was kept: the same name gets it without a "-2".
    const made = await must(asA(ORGS, "CreateOrganization", { organization: { name } }, protocol), "create again");
    expect(made.primaryDomain).toBe(`iso-admins-${protocol}.localhost`);
  });

  it("takes B's domain names and organization names on A: they are unique per instance only", async () => {
    for (const domain of ["shared.iso.example", bOrg.primary]) {
      const added = await asA(DOMAINS, "AddDomain", { domain: { domain }, ctx: { orgId: aOrg.id } }, "rest");
      expect(added, domain).toMatchObject({ ok: true, httpStatus: 201, message: { details: { id: domain, resourceOwner: { id: aOrg.id } } } });
    }
    const made = await asA(ORGS, "CreateOrganization", { organization: { name: "Iso Shared" } });
    expect(made).toMatchObject({ ok: true, message: { primaryDomain: "iso-shared.localhost", details: { resourceOwner: { id: server.instanceId } } } });
    // On A, the shared names now find A's, and only A's.
    const byDomain = await must(asA(ORGS, "SearchOrganizations", { filters: [{ domain: equals("shared.iso.example") }] }), "search");
    expect(idsOf(byDomain)).toEqual([aOrg.id]);
    expect(await asA(DOMAINS, "SearchDomains", { ctx: { orgDomain: "shared.iso.example" } })).toMatchObject({ ok: true });
  });

  it.each(PROTOCOLS)("the other way round: A's organizations and domains are NotFound on B, over %s", async (protocol) => {
    const aBefore = await must(asA(ORGS, "GetOrganization", { id: aOrg.id }), "A's org");
    for (const id of [aOrg.id, server.defaultOrgId]) {
      expectNotFound(await asB(ORGS, "GetOrganization", { id }, protocol), `${protocol} Get`);
      expectNotFound(await asB(ORGS, "PatchOrganization", { id, organization: { name: "Stolen" } }, protocol), `${protocol} Patch`);
      expectNotFound(await asB(ORGS, "DeleteOrganization", { id }, protocol), `${protocol} Delete`);
      expectNotFound(await asB(ORGS, "DeactivateOrganization", { id }, protocol), `${protocol} Deactivate`);
      expectNotFound(await asB(ORGS, "SetAsInstanceDefault", { id }, protocol), `${protocol} SetAsInstanceDefault`);
      expectNotFound(
        await asB(DOMAINS, "AddDomain", { domain: { domain: `rev-${protocol}.iso.example` }, ctx: { orgId: id } }, protocol),
        `${protocol} AddDomain`,
      );
    }
    expectNotFound(await asB(DOMAINS, "DeleteDomain", { domain: "a-only.iso.example" }, protocol), `${protocol} DeleteDomain`);
    expectNotFound(await asB(DOMAINS, "SetAsPrimary", { domain: aOrg.primary }, protocol), `${protocol} SetAsPrimary`);
    const searched = await must(asB(ORGS, "SearchOrganizations", { filters: [{ inIds: { ids: [aOrg.id, server.defaultOrgId] } }] }, protocol), "B searches");
    expect(rowsOf(searched)).toEqual([]);
    expect(totalOf(searched)).toBe(0);
    expect(await must(asA(ORGS, "GetOrganization", { id: aOrg.id }), "A's org")).toEqual(aBefore);
  });

  it.each(PROTOCOLS)("B's users, tokens, keys and links are NotFound on A to every RPC that takes a user id, over %s", async (protocol) => {
    const users = onA(USERS, protocol);
    const problems: string[] = [];
    const nf = async (label: string, rpc: string, req: JsonObject) => {
      const r = await users.call(rpc, req, ownerOfA);
      if (r.ok || r.code !== Code.NotFound || (r.httpStatus !== undefined && r.httpStatus !== 404)) problems.push(`${label} ${rpc}: ${JSON.stringify(r)}`);
    };
    for (const id of [bUserId, bHumanId, bAdminId]) {
      for (const ctx of [undefined, { orgId: aOrg.id }, { instanceId: server.instanceId }] as (JsonObject | undefined)[]) {
        const label = `${id === bHumanId ? "B's person" : id === bAdminId ? "B's admin" : "B's machine"} ctx=${JSON.stringify(ctx)}`;
        const c: JsonObject = ctx ? { ctx } : {};
        await nf(label, "GetUser", { id, ...c });
        await nf(label, "PatchUser", { id, user: { username: "stolen" }, ...c });
        await nf(label, "DeleteUser", { id, ...c });
        await nf(label, "SetPassword", { id, password: { newPassword: "Stolen-Pa55word!" }, ...c });
        for (const rpc of [
          "LockUser",
          "UnlockUser",
          "DeactivateUser",
          "ReactivateUser",
          "GenerateSecret",
          "RemoveSecret",
          "SearchPersonalAccessTokens",
          "SearchKeys",
          "ListIDPLinks",
        ])
          await nf(label, rpc, { id, ...c });
        await nf(label, "DeleteIDPLink", { id, ...bLink, ...c });
        for (const rpc of ["VerifyEmail", "VerifyPhone"]) await nf(label, rpc, { id, verification: { code: "ACDEFGHJ" }, ...c });
        for (const rpc of [
          "AddTOTP",
          "RemoveTOTP",
          "AddOTPEmail",
          "RemoveOTPEmail",
          "AddOTPSMS",
          "RemoveOTPSMS",
          "GenerateRecoveryCodes",
          "RemoveRecoveryCodes",
          "ListAuthMethods",
        ])
          await nf(label, rpc, { id, ...c });
        await nf(label, "VerifyTOTP", { id, verification: { code: "123456" }, ...c });
        await nf(label, "StartPasskeyRegistration", { id, domain: "localhost", ...c });
        await nf(label, "FinishPasskeyRegistration", {
          id,
          passkeyId: "01a20000-0000-7000-8000-00000000f00d",
          publicKeyCredential: { id: "x", type: "public-key" },
          name: "Stolen",
          ...c,
        });
        await nf(label, "ListPasskeys", { id, ...c });
        await nf(label, "RemovePasskey", { id, passkeyId: "01a20000-0000-7000-8000-00000000f00d", ...c });
        await nf(label, "StartU2FRegistration", { id, domain: "localhost", ...c });
        await nf(label, "FinishU2FRegistration", {
          id,
          u2fId: "01a20000-0000-7000-8000-00000000f00d",
          publicKeyCredential: { id: "x", type: "public-key" },
          name: "Stolen",
          ...c,
        });
        await nf(label, "ListU2F", { id, ...c });
        await nf(label, "RemoveU2F", { id, u2fId: "01a20000-0000-7000-8000-00000000f00d", ...c });
        for (const rpc of ["ResendEmailCode", "ResendPhoneCode", "ResetPassword", "ResendInvite"]) await nf(label, rpc, { id, returnCode: true, ...c });
        await nf(label, "SetPassword", { id, password: { newPassword: "Stolen-Pa55word!", verificationCode: "ACDEFGHJ" }, ...c });
        await nf(label, "AddPersonalAccessToken", { id, pat: { expirationDate: tomorrow() }, ...c });
        await nf(label, "AddKey", { id, key: { generate: "KEY_TYPE_EC", expirationDate: tomorrow() }, ...c });
        await nf(label, "DeletePersonalAccessToken", { id, patId: bPatId, ...c });
        await nf(label, "DeleteKey", { id, keyId: bKeyId, ...c });
      }
    }
    // B's token and key ids, named with A's own user.
    await nf("A's user with B's token", "DeletePersonalAccessToken", { id: aUserId, patId: bPatId });
    await nf("A's user with B's key", "DeleteKey", { id: aUserId, keyId: bKeyId });
    await nf("A's user with B's link", "DeleteIDPLink", { id: aUserId, ...bLink });
    expect(problems).toEqual([]);
    // A's own credentials are untouched by all this.
    const pats = await must(asA(USERS, "SearchPersonalAccessTokens", { id: aUserId }), "A's tokens");
    expect(idsOf(pats)).toEqual([aPatId]);
    const keys = await must(asA(USERS, "SearchKeys", { id: aUserId }), "A's keys");
    expect(idsOf(keys)).toEqual([aKeyId]);
  });

  it.each(PROTOCOLS)("B's users have no memberships on A: naming them is NotFound, over %s", async (protocol) => {
    const members = onA(MEMBERS, protocol);
    const problems: string[] = [];
    const nf = async (label: string, rpc: string, req: JsonObject) => {
      const r = await members.call(rpc, req, ownerOfA);
      if (r.ok || r.code !== Code.NotFound || (r.httpStatus !== undefined && r.httpStatus !== 404)) problems.push(`${label} ${rpc}: ${JSON.stringify(r)}`);
    };
    for (const userId of [bAdminId, bUserId, bHumanId]) {
      await nf(userId, "CreateMembership", { membership: { userId, roles: ["IAM_OWNER"] } });
      await nf(userId, "CreateMembership", { membership: { userId, roles: ["IAM_OWNER_VIEWER"] }, ctx: { instanceId: server.instanceId } });
      await nf(userId, "CreateMembership", { membership: { userId, roles: ["ORG_OWNER"] }, ctx: { orgId: aOrg.id } });
      await nf(userId, "PatchMembership", { userId, membership: { roles: ["IAM_OWNER"] } });
      await nf(userId, "PatchMembership", { userId, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: aOrg.id } });
      await nf(userId, "DeleteMembership", { userId });
      await nf(userId, "DeleteMembership", { userId, ctx: { orgId: aOrg.id } });
    }
    expect(problems).toEqual([]);
    // A system member of A does not reach B's users from A's instance context either.
    const asSystem = await onA(MEMBERS, protocol).call("CreateMembership", { membership: { userId: bHumanId, roles: ["IAM_OWNER"] } }, server.adminToken);
    expect(asSystem, "the admin of A, in A").toMatchObject({ ok: false, code: Code.NotFound });
  });

  it.each(PROTOCOLS)("B and B's organizations are NotFound as ctx of users and memberships on A; the system is PermissionDenied, over %s", async (protocol) => {
    const users = onA(USERS, protocol);
    const members = onA(MEMBERS, protocol);
    // (B's primary domain of "Iso Shared" is A's too by now: A took it in the test above.)
    const ctxs: JsonObject[] = [
      { orgId: bOrg.id },
      { orgId: b.orgId },
      { orgDomain: "b-only.iso.example" },
      { instanceId: b.instanceId },
      { instanceDomain: B_HOST },
    ];
    for (const ctx of ctxs) {
      const label = (rpc: string) => `${protocol} ${rpc} ctx=${JSON.stringify(ctx)}`;
      expectNotFound(await users.call("CreateUser", { user: { username: `iso-ctx-${protocol}`, machine: { name: "x" } }, ctx }, ownerOfA), label("CreateUser"));
      expectNotFound(await users.call("SearchUsers", { ctx }, ownerOfA), label("SearchUsers"));
      expectNotFound(await users.call("GetUser", { id: aUserId, ctx }, ownerOfA), label("GetUser"));
      expectNotFound(
        await members.call(
          "CreateMembership",
          { membership: { userId: aUserId, roles: ctx.orgId || ctx.orgDomain ? ["ORG_OWNER"] : ["IAM_OWNER"] }, ctx },
          ownerOfA,
        ),
        label("CreateMembership"),
      );
      expectNotFound(await members.call("SearchMemberships", { ctx }, ownerOfA), label("SearchMemberships"));
      expectNotFound(await members.call("DeleteMembership", { userId: bHumanId, ctx }, ownerOfA), label("DeleteMembership"));
      expectNotFound(await members.call("ListAvailableRoles", { ctx }, ownerOfA), label("ListAvailableRoles"));
    }
    for (const rpc of ["SearchMemberships", "ListAvailableRoles"]) {
      const r = await members.call(rpc, { ctx: { system: true } }, ownerOfA);
      expect(r, `${protocol} ${rpc} ctx.system`).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
    const created = await must(asA(USERS, "SearchUsers", { filters: [{ username: { value: `iso-ctx-${protocol}` } }] }), "A searches");
    expect(rowsOf(created)).toEqual([]);
  });

  it.each(PROTOCOLS)("user and membership searches on A leave B's out and never count them, over %s", async (protocol) => {
    const users = (req: JsonObject) => must(onA(USERS, protocol).call("SearchUsers", req, ownerOfA), `${protocol} SearchUsers`);
    const byIds = await users({ filters: [{ inIds: { ids: bUserIds } }] });
    expect(rowsOf(byIds), "B's ids").toEqual([]);
    expect(totalOf(byIds), "B's ids").toBe(0);
    const mixed = await users({ filters: [{ inIds: { ids: [...bUserIds, aUserId] } }] });
    expect(userIdsOf(mixed)).toEqual([aUserId]);
    expect(totalOf(mixed)).toBe(1);
    const bFilters: JsonObject[] = [
      { username: { value: "iso-shared-user" } },
      { loginName: { value: `@iso-shared.${B_HOST}`, method: "TEXT_FILTER_METHOD_ENDS_WITH" } },
      { email: { value: "iso@b.example" } },
      { organization: { orgId: bOrg.id } },
      { organization: { orgId: b.orgId } },
    ];
    for (const filter of bFilters) {
      const found = await users({ filters: [filter] });
      expect(rowsOf(found), JSON.stringify(filter)).toEqual([]);
      expect(totalOf(found), JSON.stringify(filter)).toBe(0);
    }
    const all = await users({ query: { limit: 1000 } });
    expect(
      userIdsOf(all).filter((id) => bUserIds.includes(id)),
      "B's users among A's",
    ).toEqual([]);
    expect(userIdsOf(all)).toContain(aUserId);
    expect(totalOf(all)).toBe(rowsOf(all).length);
    expect(totalOf(await users({ query: { limit: 1 } })), "the total of a short page").toBe(rowsOf(all).length);

    const members = (req: JsonObject) => must(onA(MEMBERS, protocol).call("SearchMemberships", req, ownerOfA), `${protocol} SearchMemberships`);
    for (const filter of [
      { user: { userId: bAdminId } },
      { user: { userId: bHumanId } },
      { context: { id: b.instanceId } },
      { context: { id: bOrg.id } },
    ] as JsonObject[]) {
      const found = await members({ filters: [filter] });
      expect(rowsOf(found), JSON.stringify(filter)).toEqual([]);
      expect(totalOf(found), JSON.stringify(filter)).toBe(0);
    }
    const instances = await members({ filters: [{ contextType: { type: "OWNER_TYPE_INSTANCE" } }], query: { limit: 1000 } });
    expect(
      rowsOf(instances)
        .map((r) => (r.context as JsonObject).id)
        .filter((id) => id !== server.instanceId),
      "only A's instance",
    ).toEqual([]);
    const allMembers = await members({ query: { limit: 1000 } });
    expect(
      membershipUsersOf(allMembers).filter((id) => bUserIds.includes(id)),
      "B's users among A's members",
    ).toEqual([]);
    expect(membershipUsersOf(allMembers)).toContain(aUserId);
    expect(totalOf(allMembers)).toBe(rowsOf(allMembers).length);
    expect(totalOf(await members({ query: { limit: 1 } })), "the total of a short page").toBe(rowsOf(allMembers).length);
  });

  it("takes B's usernames on A: they are unique per instance only", async () => {
    const made = await asA(USERS, "CreateUser", { user: { username: "ISO-SHARED-USER", machine: { name: "a's own" } }, ctx: { orgId: aOrg.id } }, "rest");
    expect(made).toMatchObject({ ok: true, httpStatus: 201, message: { details: { resourceOwner: { id: aOrg.id } } } });
    const found = await must(
      asA(USERS, "SearchUsers", { filters: [{ username: { value: "iso-shared-user", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }),
      "A searches",
    );
    expect(userIdsOf(found)).toEqual([String(((made as { message: JsonObject }).message.details as JsonObject).id)]);
  });

  it.each(PROTOCOLS)("the other way round: A's users and memberships are NotFound on B, over %s", async (protocol) => {
    const users = onB(USERS, protocol);
    const members = onB(MEMBERS, protocol);
    const token = b.adminToken;
    for (const [rpc, req] of [
      ["GetUser", { id: aUserId }],
      ["PatchUser", { id: aUserId, user: { username: "stolen" } }],
      ["DeleteUser", { id: aUserId }],
      ["LockUser", { id: aUserId }],
      ["SearchPersonalAccessTokens", { id: aUserId }],
      ["DeletePersonalAccessToken", { id: aUserId, patId: aPatId }],
      ["DeletePersonalAccessToken", { id: bHumanId, patId: aPatId }],
      ["DeleteKey", { id: aUserId, keyId: aKeyId }],
      ["DeleteKey", { id: bUserId, keyId: aKeyId }],
      ["ListIDPLinks", { id: aUserId }],
      ["DeleteIDPLink", { id: aUserId, ...bLink }],
      ["CreateUser", { user: { username: "iso-rev", machine: { name: "x" } }, ctx: { orgId: aOrg.id } }],
    ] as [string, JsonObject][]) {
      expectNotFound(await users.call(rpc, req, token), `${protocol} ${rpc} ${JSON.stringify(req)}`);
    }
    for (const [rpc, req] of [
      ["CreateMembership", { membership: { userId: aUserId, roles: ["IAM_OWNER"] } }],
      ["CreateMembership", { membership: { userId: bHumanId, roles: ["ORG_OWNER"] }, ctx: { orgId: aOrg.id } }],
      ["PatchMembership", { userId: aUserId, membership: { roles: ["ORG_OWNER"] }, ctx: { orgId: aOrg.id } }],
      ["DeleteMembership", { userId: aUserId, ctx: { orgId: aOrg.id } }],
      ["SearchMemberships", { ctx: { instanceId: server.instanceId } }],
    ] as [string, JsonObject][]) {
      expectNotFound(await members.call(rpc, req, token), `${protocol} ${rpc} ${JSON.stringify(req)}`);
    }
    const searched = await must(users.call("SearchUsers", { filters: [{ inIds: { ids: [aUserId] } }] }, token), "B searches users");
    expect(rowsOf(searched)).toEqual([]);
    expect(totalOf(searched)).toBe(0);
    const memberships = await must(members.call("SearchMemberships", { filters: [{ user: { userId: aUserId } }] }, token), "B searches memberships");
    expect(rowsOf(memberships)).toEqual([]);
    expect(totalOf(memberships)).toBe(0);
    // A's user is still there, with its membership.
    const mine = await must(asA(MEMBERS, "SearchMemberships", { filters: [{ user: { userId: aUserId } }] }), "A searches");
    expect(rowsOf(mine)).toMatchObject([{ roles: ["ORG_OWNER"], context: { id: aOrg.id } }]);
  });

  it.each(PROTOCOLS)("B's SMTP and SMS providers are NotFound on A, and none of its own, over %s", async (protocol) => {
    const families = [
      { service: PlatformSMTPProviders, name: "SMTP", receiver: "x@mail.example" },
      { service: PlatformSMSProviders, name: "SMS", receiver: "+41790000000" },
    ] as const;
    for (const { service, name, receiver } of families) {
      const created = await must(
        asB(service, `Create${name}Provider`, { provider: { description: `iso ${protocol}`, http: { url: "https://hooks.iso.example/b" } } }),
        `B's ${name} provider`,
      );
      const id = String((created.details as JsonObject).id);
      await must(asB(service, `Activate${name}Provider`, { id }), `B activates its ${name} provider`);
      const before = await must(asB(service, `Get${name}Provider`, { id }), `B reads its ${name} provider`);
      const a = onA(service, protocol);
      for (const [rpc, req] of [
        [`Get${name}Provider`, { id }],
        [`Patch${name}Provider`, { id, provider: { description: "stolen" } }],
        [`Activate${name}Provider`, { id }],
        [`Deactivate${name}Provider`, { id }],
        [`Test${name}Provider`, { id, test: { receiver } }],
        [`Delete${name}Provider`, { id }],
      ] as [string, JsonObject][]) {
        expectNotFound(await a.call(rpc, req, ownerOfA), `${protocol} ${rpc}`);
      }
      const searched = await must(a.call(`Search${name}Providers`, { filters: [{ inIds: { ids: [id] } }] }, ownerOfA), `A searches ${name} providers`);
      expect(rowsOf(searched)).toEqual([]);
      expect(totalOf(searched)).toBe(0);
      expect(await must(asB(service, `Get${name}Provider`, { id }), `B reads its ${name} provider again`)).toEqual(before);
    }
  });

  it.each(PROTOCOLS)("B's messages are not in A's log, and NotFound to A's RetryNotification, over %s", async (protocol) => {
    const bLog = await must(asB(PlatformNotifications, "SearchNotifications", { filters: [{ user: { userId: bHumanId } }] }), "B's log");
    const bMessage = String(rowsOf(bLog)[0]!.id);
    const a = onA(PlatformNotifications, protocol);
    const searched = await must(a.call("SearchNotifications", { filters: [{ user: { userId: bHumanId } }] }, ownerOfA), "A searches the log");
    expect(rowsOf(searched)).toEqual([]);
    expect(totalOf(searched)).toBe(0);
    expect(rowsOf(await must(a.call("SearchNotifications", {}, ownerOfA), "A's whole log")).map((m) => m.id)).not.toContain(bMessage);
    expectNotFound(await a.call("RetryNotification", { id: bMessage }, ownerOfA), `${protocol} RetryNotification`);
  });

  it.each(PROTOCOLS)(
    "B's sessions are NotFound on A, their tokens too, and B's people sign in to none there; the same the other way round, over %s",
    async (protocol) => {
      const SESSIONS = PlatformSessions;
      const made = await must(asB(SESSIONS, "CreateSession", { checks: { user: { userId: bHumanId } } }), "B's session");
      const id = String(made.sessionId);
      const sessionToken = String(made.sessionToken);
      const before = await must(asB(SESSIONS, "GetSession", { id }), "B reads its session");
      const a = onA(SESSIONS, protocol);
      for (const [rpc, req] of [
        ["GetSession", { id }],
        ["GetSession", { id, sessionToken }],
        ["PatchSession", { id, sessionToken, metadata: { stolen: "eA==" } }],
        ["DeleteSession", { id }],
        ["DeleteSession", { id, sessionToken }],
        ["CreateSession", { checks: { user: { userId: bHumanId } } }],
      ] as [string, JsonObject][]) {
        expectNotFound(await a.call(rpc, req, ownerOfA), `${protocol} ${rpc} ${JSON.stringify(req)}`);
      }
      const named = await a.call("CreateSession", { checks: { user: { userId: bHumanId }, password: { password: "Any-Pa55word!" } } }, ownerOfA);
      expect(named, `${protocol} CreateSession with B's person and a password`).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        message: "the login name or password is not valid",
      });
      for (const filters of [[{ ids: { ids: [id] } }], [{ userId: bHumanId }]] as JsonObject[][]) {
        const found = await must(a.call("SearchSessions", { filters }, ownerOfA), "A searches sessions");
        expect(rowsOf(found), JSON.stringify(filters)).toEqual([]);
        expect(totalOf(found), JSON.stringify(filters)).toBe(0);
      }
      expect(await must(asB(SESSIONS, "GetSession", { id }), "B reads its session again")).toEqual(before);

      const person = await must(
        asA(USERS, "CreateUser", {
          user: {
            username: `iso-session-${protocol}`,
            human: { profile: { givenName: "Iso", familyName: "A" }, email: { address: `iso-${protocol}@a.example` } },
          },
          ctx: { orgId: aOrg.id },
        }),
        "A's person",
      );
      const mine = await must(asA(SESSIONS, "CreateSession", { checks: { user: { userId: String((person.details as JsonObject).id) } } }), "A's session");
      const onBSessions = onB(SESSIONS, protocol);
      for (const [rpc, req] of [
        ["GetSession", { id: mine.sessionId, sessionToken: mine.sessionToken }],
        ["PatchSession", { id: mine.sessionId, sessionToken: mine.sessionToken }],
        ["DeleteSession", { id: mine.sessionId, sessionToken: mine.sessionToken }],
      ] as [string, JsonObject][]) {
        expectNotFound(await onBSessions.call(rpc, req, b.adminToken), `${protocol} ${rpc} of A's session on B`);
      }
      await must(asA(SESSIONS, "GetSession", { id: String(mine.sessionId) }), "A's session is still there");
    },
  );

  it("changed nothing B owns", async () => {
    expect(await stateOfB()).toEqual(bBefore);
  });

  it("lets B take A's domain names in turn", async () => {
    const added = await asB(DOMAINS, "AddDomain", { domain: { domain: "a-only.iso.example" }, ctx: { orgId: bOrg.id } });
    expect(added).toMatchObject({ ok: true, message: { details: { resourceOwner: { id: bOrg.id } } } });
    const mine = await must(asA(DOMAINS, "SearchDomains", { filters: [{ domain: equals("a-only.iso.example") }] }), "A searches");
    expect(rowsOf(mine)).toMatchObject([{ details: { resourceOwner: { id: aOrg.id } } }]);
  });
});
