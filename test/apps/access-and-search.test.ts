import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { setInstanceFlag } from "../support/features.js";
import { listDetails, type Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, INACTIVE, appClient, createOrg, createProject, oidc, orgOwner, type Client } from "./helpers.js";

const OK = "ok";
const DENIED = Code.PermissionDenied;
const NOT_FOUND = Code.NotFound;
type Outcome = typeof OK | Code;
const outcome = (r: CallResult): Outcome => (r.ok ? OK : r.code);

/** Every PlatformApps RPC in a fixed order, against fresh fixtures of a project of org A. */
const OPERATIONS = ["get", "searchOrgA", "create", "patch", "deactivate", "reactivate", "regenerate", "delete"] as const;
type Operation = (typeof OPERATIONS)[number];
const READS: Operation[] = ["get", "searchOrgA"];

describe.each(DATABASE_KINDS)("who may do what with apps (%s)", (kind) => {
  let server: TestServer;
  let admin: Client;
  let orgA: string;
  let orgB: string;
  let projectA: string;
  let projectB: string;
  let other: Awaited<ReturnType<TestServer["createInstance"]>>;
  let counter = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
    admin = appClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "Apps Access Org A");
    orgB = await createOrg(server.baseUrl, server.adminToken, "Apps Access Org B");
    projectA = await createProject(server.baseUrl, server.adminToken, "Access Project A", orgA);
    projectB = await createProject(server.baseUrl, server.adminToken, "Access Project B", orgB);
    other = await server.createInstance("127.0.0.1");
  });
  afterAll(() => server?.close());

  /** An active app and an inactive one in project A. */
  async function fixtures() {
    const n = ++counter;
    const active = (await admin.ok("CreateApp", { projectId: projectA, app: { name: `Active ${n}`, oidc: oidc() } })).details.id as string;
    const inactive = (await admin.ok("CreateApp", { projectId: projectA, app: { name: `Inactive ${n}`, api: {} } })).details.id as string;
    await admin.ok("DeactivateApp", { id: inactive });
    return { active, inactive, n };
  }

  async function everyOperation(token: string, baseUrl = server.baseUrl): Promise<Record<Operation, Outcome>> {
    const { active, inactive, n } = await fixtures();
    const c = appClient(baseUrl, token);
    const requests: Record<Operation, [string, JsonObject]> = {
      get: ["GetApp", { id: active }],
      searchOrgA: ["SearchApps", { ctx: { orgId: orgA } }],
      create: ["CreateApp", { projectId: projectA, app: { name: `Created ${n}`, api: {} } }],
      patch: ["PatchApp", { id: active, app: { name: `Patched ${n}` } }],
      deactivate: ["DeactivateApp", { id: active }],
      reactivate: ["ReactivateApp", { id: inactive }],
      regenerate: ["RegenerateAppSecret", { id: inactive }],
      delete: ["DeleteApp", { id: inactive }],
    };
    const out = {} as Record<Operation, Outcome>;
    for (const op of OPERATIONS) out[op] = outcome(await c.call(requests[op][0], requests[op][1], token));
    return out;
  }
  const table = (entries: Partial<Record<Operation, Outcome>>, rest: Outcome) =>
    Object.fromEntries(OPERATIONS.map((op) => [op, entries[op] ?? rest])) as Record<Operation, Outcome>;

  describe("permissions", () => {
    it("IAM_OWNER: everything", async () => {
      const iam = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER"] }] });
      expect(await everyOperation(iam.token)).toEqual(table({}, OK));
    });

    it("ORG_OWNER of the project's organization: everything", async () => {
      const owner = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
      expect(await everyOperation(owner.token)).toEqual(table({}, OK));
    });

    it("ORG_OWNER_VIEWER and IAM_OWNER_VIEWER: reads only", async () => {
      const reads = Object.fromEntries(READS.map((op) => [op, OK]));
      const viewer = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }] });
      expect(await everyOperation(viewer.token)).toEqual(table(reads, DENIED));
      const instViewer = await server.createUser({ roles: [{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }] });
      expect(await everyOperation(instViewer.token)).toEqual(table(reads, DENIED));
    });

    it("ORG_OWNER of another organization and a plain user: PermissionDenied", async () => {
      const ownerB = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }] });
      expect(await everyOperation(ownerB.token)).toEqual(table({}, DENIED));
      const plain = await server.createUser({});
      expect(await everyOperation(plain.token)).toEqual(table({}, DENIED));
    });

    it("another instance's admin: our apps and projects do not exist", async () => {
      expect(await everyOperation(other.adminToken, other.baseUrl)).toEqual(table({}, NOT_FOUND));
    });

    it("without a token: Unauthenticated", async () => {
      expect(await everyOperation("")).toEqual(table({}, Code.Unauthenticated));
    });

    it("what a viewer or a foreign owner was refused did not happen", async () => {
      const { active, inactive } = await fixtures();
      const before = [(await admin.ok("GetApp", { id: active })).app, (await admin.ok("GetApp", { id: inactive })).app];
      const viewer = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER_VIEWER"] }] });
      const ownerB = await server.createUser({ roles: [{ context: "org", contextId: orgB, roles: ["ORG_OWNER"] }] });
      for (const token of [viewer.token, ownerB.token]) await everyOperationOn(token, active, inactive);
      expect([(await admin.ok("GetApp", { id: active })).app, (await admin.ok("GetApp", { id: inactive })).app]).toEqual(before);
    });

    async function everyOperationOn(token: string, active: string, inactive: string) {
      for (const [method, req] of [
        ["PatchApp", { id: active, app: { name: "Hijacked", oidc: { devMode: true } } }],
        ["DeactivateApp", { id: active }],
        ["ReactivateApp", { id: inactive }],
        ["RegenerateAppSecret", { id: active }],
        ["DeleteApp", { id: inactive }],
      ] as const) {
        expect(outcome(await admin.call(method, req, token)), method).toBe(DENIED);
      }
    }

    it("an ORG_OWNER creates in its own projects only, and a ctx that does not own the app is NotFound", async () => {
      const ownerA = await server.createUser({ roles: [{ context: "org", contextId: orgA, roles: ["ORG_OWNER"] }] });
      const a = appClient(server.baseUrl, ownerA.token);
      const made = await a.ok("CreateApp", {
        projectId: projectA,
        app: { name: "By Owner A", oidc: oidc({ authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" }) },
        ctx: { orgId: orgA },
      });
      expect(made).toEqual({
        details: { id: expect.any(String), sequence: "1", changeDate: expect.any(String), resourceOwner: orgOwner(orgA) },
        clientId: expect.any(String),
      });
      expect(outcome(await a.call("CreateApp", { projectId: projectB, app: { name: "Sneaky", api: {} } }))).toBe(DENIED);
      expect(outcome(await a.call("CreateApp", { projectId: projectB, app: { name: "Sneaky", api: {} }, ctx: { orgId: orgA } }))).toBe(NOT_FOUND);
      expect(outcome(await a.call("CreateApp", { projectId: "no-such-project", app: { name: "Sneaky", api: {} } }))).toBe(NOT_FOUND);
      expect((await admin.ok("SearchApps", { filters: [{ name: { name: "Sneaky" } }] })).result).toBeUndefined();
      const id = made.details.id as string;
      expect(outcome(await a.call("GetApp", { id, ctx: { orgId: orgA } }))).toBe(OK);
      expect(outcome(await a.call("GetApp", { id, ctx: { orgId: orgB } }))).toBe(NOT_FOUND);
      expect(outcome(await admin.call("GetApp", { id, ctx: { orgId: orgB } }))).toBe(NOT_FOUND);
      expect(outcome(await admin.call("PatchApp", { id, app: { name: "x" }, ctx: { orgId: orgB } }))).toBe(NOT_FOUND);
      expect(outcome(await admin.call("DeleteApp", { id, ctx: { orgId: orgB } }))).toBe(NOT_FOUND);
      expect(outcome(await a.call("GetApp", { id: "no-such-app" }))).toBe(NOT_FOUND);
      expect((await admin.ok("GetApp", { id })).app.app.name).toBe("By Owner A");
    });

    it("the feature flag multitenancy_resources_api off: FailedPrecondition in that instance only", async () => {
      const theirs = appClient(other.baseUrl, other.adminToken);
      const project = (
        await (await import("./helpers.js")).projectClient(other.baseUrl, other.adminToken).ok("CreateProject", { project: { name: "Flagged" } })
      ).details.id as string;
      const id = (await theirs.ok("CreateApp", { projectId: project, app: { name: "Flagged", api: {} } })).details.id as string;
      await setInstanceFlag(server, other.instanceId, "multitenancy_resources_api", false);
      try {
        for (const [method, req] of [
          ["CreateApp", { projectId: project, app: { name: "Off", api: {} } }],
          ["GetApp", { id }],
          ["SearchApps", {}],
          ["PatchApp", { id, app: { name: "Off" } }],
          ["DeactivateApp", { id }],
          ["RegenerateAppSecret", { id }],
          ["DeleteApp", { id }],
        ] as const) {
          const r = await theirs.call(method, req);
          expect(r, method).toMatchObject({ ok: false, code: Code.FailedPrecondition });
        }
        expect(outcome(await admin.call("SearchApps", {}))).toBe(OK);
      } finally {
        await setInstanceFlag(server, other.instanceId, "multitenancy_resources_api", undefined);
      }
      expect((await theirs.ok("GetApp", { id })).app.app.name).toBe("Flagged");
    });
  });

  describe("search", () => {
    let org: string;
    let p1: string;
    let p2: string;
    /** Apps by name, created in this order. */
    const ids: Record<string, string> = {};
    const clientIds: Record<string, string> = {};

    beforeAll(async () => {
      org = await createOrg(server.baseUrl, server.adminToken, "Apps Search Org");
      p1 = await createProject(server.baseUrl, server.adminToken, "Search P1", org);
      p2 = await createProject(server.baseUrl, server.adminToken, "Search P2", org);
      const specs: [string, string, JsonObject][] = [
        ["srch Beta", p1, { oidc: oidc() }],
        ["srch alpha", p1, { api: {} }],
        ["srch Gamma", p2, { oidc: oidc({ authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" }) }],
        ["srch delta", p2, { api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } }],
        ["srch Alphabet", p2, { oidc: oidc() }],
      ];
      for (const [name, projectId, config] of specs) {
        const made = await admin.ok("CreateApp", { projectId, app: { name, ...config } });
        ids[name] = made.details.id;
        clientIds[name] = made.clientId;
      }
      await admin.ok("DeactivateApp", { id: ids["srch Gamma"]! });
      // Changed last: first by change date descending.
      await admin.ok("PatchApp", { id: ids["srch Beta"]!, app: { oidc: { idTokenRoleAssertion: true } } });
    });

    const names = (m: Msg): string[] => (m.result ?? []).map((x: Msg) => x.app.name);
    const search = (req: JsonObject, token?: string) => admin.ok("SearchApps", { ctx: { orgId: org }, ...req }, token);

    it("returns full results, newest first by default, without secrets", async () => {
      const found = await search({});
      expect(names(found)).toEqual(["srch Alphabet", "srch delta", "srch Gamma", "srch alpha", "srch Beta"]);
      expect(listDetails(found)).toMatchObject({ totalResult: 5, endOfList: true, appliedLimit: 100 });
      const gamma = found.result.find((x: Msg) => x.app.name === "srch Gamma");
      const got = (await admin.ok("GetApp", { id: ids["srch Gamma"]! })).app;
      expect(gamma).toEqual(got);
      expect(gamma).toMatchObject({ projectId: p2, clientId: clientIds["srch Gamma"], state: INACTIVE, details: { resourceOwner: orgOwner(org) } });
      expect(found.result.find((x: Msg) => x.app.name === "srch Beta")).toMatchObject({
        hasSecret: true,
        state: ACTIVE,
        app: { oidc: { idTokenRoleAssertion: true } },
      });
      expect(JSON.stringify(found)).not.toMatch(/secret_hash|clientSecret/);
    });

    it("filters by project, name, state and client ID, combined with AND", async () => {
      expect(names(await search({ filters: [{ projectId: { projectId: p1 } }] }))).toEqual(["srch alpha", "srch Beta"]);
      expect(names(await search({ filters: [{ name: { name: "srch alpha" } }] }))).toEqual(["srch alpha"]);
      expect(names(await search({ filters: [{ name: { name: "SRCH ALPHA", method: "TEXT_FILTER_METHOD_EQUALS_IGNORE_CASE" } }] }))).toEqual(["srch alpha"]);
      expect(names(await search({ filters: [{ name: { name: "srch Alpha", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] }))).toEqual(["srch Alphabet"]);
      expect(names(await search({ filters: [{ name: { name: "srch alpha", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }] }))).toEqual([
        "srch Alphabet",
        "srch alpha",
      ]);
      expect(names(await search({ filters: [{ name: { name: "ta", method: "TEXT_FILTER_METHOD_CONTAINS" } }] }))).toEqual(["srch delta", "srch Beta"]);
      expect(names(await search({ filters: [{ name: { name: "A", method: "TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE" } }] }))).toEqual([
        "srch delta",
        "srch Gamma",
        "srch alpha",
        "srch Beta",
      ]);
      expect(names(await search({ filters: [{ state: { state: INACTIVE } }] }))).toEqual(["srch Gamma"]);
      expect(names(await search({ filters: [{ state: { state: ACTIVE } }, { projectId: { projectId: p2 } }] }))).toEqual(["srch Alphabet", "srch delta"]);
      expect(names(await search({ filters: [{ clientId: { clientId: clientIds["srch delta"]! } }] }))).toEqual(["srch delta"]);
      // The client ID is compared exactly.
      expect(
        names(
          await search({
            filters: [
              { clientId: { clientId: clientIds["srch delta"]!.toLowerCase() === clientIds["srch delta"] ? "nope" : clientIds["srch delta"]!.toLowerCase() } },
            ],
          }),
        ),
      ).toEqual([]);
      expect(names(await search({ filters: [{ clientId: { clientId: clientIds["srch delta"]! } }, { projectId: { projectId: p1 } }] }))).toEqual([]);
      expect(names(await search({ filters: [{ projectId: { projectId: "no-such-project" } }] }))).toEqual([]);
    });

    it("sorts by creation date, change date and name, both ways, with paging", async () => {
      expect(names(await search({ sortingColumn: "APP_FIELD_NAME_CREATION_DATE", query: { asc: true } }))).toEqual([
        "srch Beta",
        "srch alpha",
        "srch Gamma",
        "srch delta",
        "srch Alphabet",
      ]);
      expect(names(await search({ sortingColumn: "APP_FIELD_NAME_CHANGE_DATE" }))).toEqual([
        "srch Beta",
        "srch Gamma",
        "srch Alphabet",
        "srch delta",
        "srch alpha",
      ]);
      const byName = await search({ sortingColumn: "APP_FIELD_NAME_NAME", query: { asc: true } });
      expect(byName.sortingColumn).toBe("APP_FIELD_NAME_NAME");
      // Byte-wise: capitals first.
      expect(names(byName)).toEqual(["srch Alphabet", "srch Beta", "srch Gamma", "srch alpha", "srch delta"]);
      expect(names(await search({ sortingColumn: "APP_FIELD_NAME_NAME" }))).toEqual(["srch delta", "srch alpha", "srch Gamma", "srch Beta", "srch Alphabet"]);
      const page1 = await search({ sortingColumn: "APP_FIELD_NAME_NAME", query: { asc: true, limit: 2 } });
      expect(names(page1)).toEqual(["srch Alphabet", "srch Beta"]);
      expect(listDetails(page1)).toMatchObject({ totalResult: 5, endOfList: false, appliedLimit: 2 });
      const page3 = await search({ sortingColumn: "APP_FIELD_NAME_NAME", query: { asc: true, limit: 2, offset: 4 } });
      expect(names(page3)).toEqual(["srch delta"]);
      expect(listDetails(page3)).toMatchObject({ totalResult: 5, endOfList: true });
      expect(outcome(await admin.call("SearchApps", { query: { limit: 1001 } }))).toBe(Code.InvalidArgument);
      expect(outcome(await admin.call("SearchApps", { filters: [{}] }))).toBe(Code.InvalidArgument);
      expect(outcome(await admin.call("SearchApps", { filters: [{ projectId: { projectId: "" } }] }))).toBe(Code.InvalidArgument);
      expect(outcome(await admin.call("SearchApps", { filters: [{ state: {} }] }))).toBe(Code.InvalidArgument);
    });

    it("an org ctx restricts to that organization; without one, callers see what they may read", async () => {
      const all = await admin.ok("SearchApps", { filters: [{ name: { name: "srch", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] });
      expect(names(all).length).toBe(5);
      // An app of org A is not in the search org's results.
      await admin.ok("CreateApp", { projectId: projectA, app: { name: "srch In A", api: {} } });
      expect(names(await search({ filters: [{ projectId: { projectId: projectA } }] }))).toEqual([]);
      const inA = await admin.ok("SearchApps", { ctx: { orgId: orgA } });
      expect(inA.result.length).toBeGreaterThan(0);
      for (const x of inA.result) expect(x.details.resourceOwner).toEqual(orgOwner(orgA));

      const owner = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER"] }] });
      const viewer = await server.createUser({ roles: [{ context: "org", contextId: org, roles: ["ORG_OWNER_VIEWER"] }] });
      for (const token of [owner.token, viewer.token]) {
        const mine = await admin.ok("SearchApps", {}, token);
        expect(names(mine)).toEqual(["srch Alphabet", "srch delta", "srch Gamma", "srch alpha", "srch Beta"]);
        expect(listDetails(mine).totalResult).toBe(5);
        // Naming another organization: nothing of it.
        expect(outcome(await admin.call("SearchApps", { ctx: { orgId: orgA } }, token))).toBe(DENIED);
      }
      const plain = await server.createUser({});
      expect(outcome(await admin.call("SearchApps", {}, plain.token))).toBe(DENIED);
      // Another instance sees none of ours.
      const theirs = await appClient(other.baseUrl, other.adminToken).ok("SearchApps", {
        filters: [{ name: { name: "srch", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
      });
      expect(names(theirs)).toEqual([]);
    });
  });
});
