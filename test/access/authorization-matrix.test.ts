import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The authorization matrix: every RPC of PlatformOrganizations, PlatformDomains and
 * PlatformActions for every kind of caller. The expected outcomes are written here by hand
 * from the role table of the issue, not computed from src/domain/authz or method-rules:
 *
 *   SYSTEM_OWNER      everything, everywhere
 *   IAM_OWNER         everything in its instance (instance.*, org.*, org.domain.*, actions, …)
 *   IAM_OWNER_VIEWER  the *.read permissions of IAM_OWNER, in its instance
 *   ORG_OWNER         in its organization: org.read, org.write (no org.delete, no instance.*),
 *                     org.domain.read/write, user.*, member.*, idp.*
 *   ORG_OWNER_VIEWER  the reads of ORG_OWNER, in its organization
 *   plain user        nothing
 *
 * A request is checked in the organization its ctx selects, else in the one owning the
 * resource it names, else in the instance. Searches show only what the caller may read and
 * are PermissionDenied when it may read nothing. A resource that does not exist (or lies
 * outside the ctx organization) is NotFound to who holds the permission somewhere in the
 * instance, PermissionDenied to anyone else.
 *
 * Fixture: organizations A and B, made by the admin through the API, each with its generated
 * primary domain and one added domain. The ORG_OWNER and ORG_OWNER_VIEWER hold their
 * membership in A; "in A" columns name A's resources (or ctx A), "in B" columns B's.
 * Everybody else acts on A, or on a fresh organization where the call destroys it.
 */

const COLUMNS = ["none", "system", "iamOwner", "iamViewer", "ownerInA", "ownerInB", "viewerInA", "viewerInB", "plain"] as const;
type Column = (typeof COLUMNS)[number];

type Outcome = "ok" | "denied" | "unauth" | "notfound" | "failed";
/** ok: success; denied: PermissionDenied (403); unauth: Unauthenticated (401); notfound: NotFound (404); failed: FailedPrecondition (400). */
const [OK, D, U, NF, FP] = ["ok", "denied", "unauth", "notfound", "failed"] as const satisfies Outcome[];

/** What a successful search returns: every organization's ("all"), exactly A's, or nothing. */
type Visible = "all" | "A" | "none" | "-";

interface Org {
  id: string;
  primary: string;
}

interface Scene {
  column: Column;
  protocol: Protocol;
  /** The organization the caller acts in: A, B, or a fresh one. */
  org: Org;
  /** The other one of A and B. */
  other: Org;
  a: Org;
  b: Org;
  defaultOrgId: string;
  targetId: string;
  instanceId: string;
  /** What a row's request remembers for its check (a generated name, a value before). */
  memo: Record<string, string>;
  admin(service: DescService, rpc: string, req: JsonObject): Promise<CallResult>;
  unique(prefix: string): string;
}

interface Row {
  service: DescService;
  rpc: string;
  what: string;
  /** One outcome per column, in the order of COLUMNS. */
  expect: readonly Outcome[];
  /** For searches: what an "ok" answer contains, per column. */
  visible?: readonly Visible[];
  /** Callers without membership in A act on a fresh organization (the call destroys it). */
  fresh?: boolean;
  request(s: Scene): JsonObject | Promise<JsonObject>;
  /** Runs after every call, whatever its outcome: what must (not) have changed. */
  check?(s: Scene, r: CallResult, outcome: Outcome): Promise<void>;
  /** Runs after every call: undoes what the row (or a wrongly successful call) changed in A or B. */
  cleanup?(s: Scene): Promise<void>;
}

const ORGS = PlatformOrganizations;
const DOMAINS = PlatformDomains;
const ACTIONS = PlatformActions;

const idOf = (r: CallResult) => String(((r as { message: JsonObject }).message.details as JsonObject).id);

async function must(r: Promise<CallResult>, what: string): Promise<JsonObject> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

/** The admin's view of a domain: its organization, or undefined when no organization has it. */
async function ownerOfDomain(s: Scene, domain: string): Promise<string | undefined> {
  const found = await must(s.admin(DOMAINS, "SearchDomains", { filters: [{ domain: { domain, method: "TEXT_FILTER_METHOD_EQUALS" } }] }), "admin SearchDomains");
  const rows = (found.result ?? []) as JsonObject[];
  return rows.length === 0 ? undefined : String(((rows[0]!.details as JsonObject).resourceOwner as JsonObject).id);
}

async function orgAsAdminSees(s: Scene, id: string): Promise<JsonObject | undefined> {
  const r = await s.admin(ORGS, "GetOrganization", { id });
  if (!r.ok && r.code === Code.NotFound) return undefined;
  return (await must(Promise.resolve(r), "admin GetOrganization")).organization as JsonObject;
}

async function addDomainAsAdmin(s: Scene, orgId: string): Promise<string> {
  const domain = s.unique("m") + ".matrix.example";
  await must(s.admin(DOMAINS, "AddDomain", { domain: { domain }, ctx: { orgId } }), "admin AddDomain");
  return domain;
}

async function freshTarget(s: Scene): Promise<string> {
  const made = await s.admin(ACTIONS, "CreateTarget", { target: { name: s.unique("matrix-target"), restWebhook: { url: "https://example.com/m" } } });
  await must(Promise.resolve(made), "admin CreateTarget");
  return idOf(made);
}

const expectState = async (s: Scene, outcome: Outcome, whenOk: string, otherwise: string) => {
  const seen = await orgAsAdminSees(s, s.org.id);
  expect(seen?.state, "the organization's state afterwards").toBe(outcome === OK ? whenOk : otherwise);
};

const reactivate = async (s: Scene) => {
  await s.admin(ORGS, "ReactivateOrganization", { id: s.org.id });
};

/** A fresh domain name in an AddDomain request, remembered for the check. */
function withDomain(s: Scene, rest: JsonObject): JsonObject {
  s.memo.domain = s.unique("add") + ".matrix.example";
  return { ...rest, domain: { domain: s.memo.domain } };
}

/** After AddDomain: the domain belongs to that organization when the call succeeded, else to none. */
const domainAddedTo = (expectedOrg: (s: Scene) => string) => async (s: Scene, _r: CallResult, outcome: Outcome) => {
  expect(await ownerOfDomain(s, s.memo.domain!), `owner of ${s.memo.domain}`).toBe(outcome === OK ? expectedOrg(s) : undefined);
};

const NO_SUCH_ORG = "01a20000-0000-7000-8000-00000000dead";
const NO_SUCH_DOMAIN = "no-such-domain.matrix.example";

//                                             none system iam  iamView ownerA ownerB viewA viewB plain
const ROWS: Row[] = [
  // PlatformOrganizations
  {
    service: ORGS, rpc: "CreateOrganization", what: "a new organization (an instance-wide write)",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => ({ organization: { name: s.unique("Matrix new") } }),
  },
  {
    service: ORGS, rpc: "GetOrganization", what: "the organization acted in",
    expect:                                   [U,   OK,    OK,  OK,     OK,    D,     OK,   D,    D],
    request: (s) => ({ id: s.org.id }),
    async check(s, r, outcome) {
      if (outcome === OK) expect(idOf({ ok: true, message: (r as { message: JsonObject }).message.organization as JsonObject })).toBe(s.org.id);
    },
  },
  {
    service: ORGS, rpc: "GetOrganization", what: "an id no organization has",
    expect:                                   [U,   NF,    NF,  NF,     NF,    NF,    NF,   NF,   D],
    request: () => ({ id: NO_SUCH_ORG }),
  },
  {
    service: ORGS, rpc: "SearchOrganizations", what: "without filters",
    expect:                                   [U,   OK,    OK,  OK,     OK,    OK,    OK,   OK,   D],
    visible:                                  ["-", "all", "all", "all", "A",  "A",   "A",  "A",  "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: ORGS, rpc: "SearchOrganizations", what: "filtered to the id of the organization acted in",
    expect:                                   [U,   OK,    OK,  OK,     OK,    OK,    OK,   OK,   D],
    visible:                                  ["-", "A",   "A", "A",    "A",   "none", "A", "none", "-"],
    request: (s) => ({ filters: [{ inIds: { ids: [s.org.id] } }] }),
  },
  {
    service: ORGS, rpc: "PatchOrganization", what: "renaming the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    async request(s) {
      s.memo.before = String((await orgAsAdminSees(s, s.org.id))!.name);
      s.memo.name = s.unique("Matrix renamed");
      return { id: s.org.id, organization: { name: s.memo.name } };
    },
    async check(s, _r, outcome) {
      const seen = await orgAsAdminSees(s, s.org.id);
      expect(seen?.name, "the organization's name afterwards").toBe(outcome === OK ? s.memo.name : s.memo.before);
    },
  },
  {
    service: ORGS, rpc: "DeleteOrganization", what: "the organization acted in (org.delete: instance roles only)",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    fresh: true,
    request: (s) => ({ id: s.org.id }),
    async check(s, _r, outcome) {
      expect(await orgAsAdminSees(s, s.org.id), "the organization afterwards").toEqual(outcome === OK ? undefined : expect.objectContaining({ name: expect.any(String) }));
    },
  },
  {
    service: ORGS, rpc: "DeleteOrganization", what: "an id no organization has",
    expect:                                   [U,   NF,    NF,  D,      D,     D,     D,    D,    D],
    request: () => ({ id: NO_SUCH_ORG }),
  },
  {
    service: ORGS, rpc: "DeleteOrganization", what: "the instance's default organization",
    expect:                                   [U,   FP,    FP,  D,      D,     D,     D,    D,    D],
    request: (s) => ({ id: s.defaultOrgId }),
  },
  {
    service: ORGS, rpc: "DeactivateOrganization", what: "the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    fresh: true,
    request: (s) => ({ id: s.org.id }),
    check: (s, _r, outcome) => expectState(s, outcome, "ORGANIZATION_STATE_INACTIVE", "ORGANIZATION_STATE_ACTIVE"),
    cleanup: reactivate,
  },
  {
    service: ORGS, rpc: "ReactivateOrganization", what: "the (deactivated) organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    fresh: true,
    async request(s) {
      await must(s.admin(ORGS, "DeactivateOrganization", { id: s.org.id }), "admin DeactivateOrganization");
      return { id: s.org.id };
    },
    check: (s, _r, outcome) => expectState(s, outcome, "ORGANIZATION_STATE_ACTIVE", "ORGANIZATION_STATE_INACTIVE"),
    cleanup: reactivate,
  },
  {
    service: ORGS, rpc: "SetAsInstanceDefault", what: "the organization acted in (instance.write)",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => ({ id: s.org.id }),
    async check(s, _r, outcome) {
      const now = await must(s.admin(ORGS, "GetInstanceDefault", {}), "admin GetInstanceDefault");
      expect(idOf({ ok: true, message: now.organization as JsonObject }), "the default afterwards").toBe(outcome === OK ? s.org.id : s.defaultOrgId);
    },
    async cleanup(s) {
      await must(s.admin(ORGS, "SetAsInstanceDefault", { id: s.defaultOrgId }), "admin resets the default");
    },
  },
  {
    service: ORGS, rpc: "GetInstanceDefault", what: "(org.read in the instance)",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
    async check(s, r, outcome) {
      if (outcome === OK) expect(idOf({ ok: true, message: (r as { message: JsonObject }).message.organization as JsonObject })).toBe(s.defaultOrgId);
    },
  },

  // PlatformDomains
  {
    service: DOMAINS, rpc: "AddDomain", what: "with ctx.orgId of the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    request: (s) => withDomain(s, { ctx: { orgId: s.org.id } }),
    check: domainAddedTo((s) => s.org.id),
  },
  {
    service: DOMAINS, rpc: "AddDomain", what: "with ctx.orgDomain of the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    request: (s) => withDomain(s, { ctx: { orgDomain: s.org.primary } }),
    check: domainAddedTo((s) => s.org.id),
  },
  {
    service: DOMAINS, rpc: "AddDomain", what: "without ctx (the default organization)",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => withDomain(s, {}),
    check: domainAddedTo((s) => s.defaultOrgId),
  },
  {
    service: DOMAINS, rpc: "AddDomain", what: "with ctx.instanceId of its own instance (the default organization)",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => withDomain(s, { ctx: { instanceId: s.instanceId } }),
    check: domainAddedTo((s) => s.defaultOrgId),
  },
  {
    // The ctx names an organization that does not exist: by the resource rule, only who may
    // add domains somewhere learns that; others get PermissionDenied, as for B.
    service: DOMAINS, rpc: "AddDomain", what: "with ctx.orgId of no organization",
    expect:                                   [U,   NF,    NF,  D,      NF,    NF,    D,    D,    D],
    request: (s) => withDomain(s, { ctx: { orgId: NO_SUCH_ORG } }),
  },
  {
    service: DOMAINS, rpc: "SearchDomains", what: "without ctx",
    expect:                                   [U,   OK,    OK,  OK,     OK,    OK,    OK,   OK,   D],
    visible:                                  ["-", "all", "all", "all", "A",  "A",   "A",  "A",  "-"],
    request: () => ({ query: { limit: 1000 } }),
  },
  {
    service: DOMAINS, rpc: "SearchDomains", what: "with ctx.orgId of the organization acted in",
    expect:                                   [U,   OK,    OK,  OK,     OK,    D,     OK,   D,    D],
    visible:                                  ["-", "A",   "A", "A",    "A",   "-",   "A",  "-",  "-"],
    request: (s) => ({ ctx: { orgId: s.org.id }, query: { limit: 1000 } }),
  },
  {
    service: DOMAINS, rpc: "SearchDomains", what: "with ctx.orgDomain of no organization",
    expect:                                   [U,   NF,    NF,  NF,     NF,    NF,    NF,   NF,   D],
    request: () => ({ ctx: { orgDomain: NO_SUCH_DOMAIN } }),
  },
  {
    service: DOMAINS, rpc: "DeleteDomain", what: "an added domain of the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      return { domain: s.memo.domain };
    },
    async check(s, _r, outcome) {
      const domain = s.memo.domain!;
      expect(await ownerOfDomain(s, domain), `owner of ${domain} afterwards`).toBe(outcome === OK ? undefined : s.org.id);
    },
  },
  {
    service: DOMAINS, rpc: "DeleteDomain", what: "the primary domain of the organization acted in",
    expect:                                   [U,   FP,    FP,  D,      FP,    D,     D,    D,    D],
    request: (s) => ({ domain: s.org.primary }),
  },
  {
    service: DOMAINS, rpc: "DeleteDomain", what: "a domain of the other organization, with ctx.orgId of the one acted in",
    expect:                                   [U,   NF,    NF,  D,      NF,    NF,    D,    D,    D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.other.id);
      return { domain: s.memo.domain, ctx: { orgId: s.org.id } };
    },
    async check(s) {
      expect(await ownerOfDomain(s, s.memo.domain!), "the other organization keeps its domain").toBe(s.other.id);
    },
  },
  {
    service: DOMAINS, rpc: "DeleteDomain", what: "a domain no organization has",
    expect:                                   [U,   NF,    NF,  D,      NF,    NF,    D,    D,    D],
    request: () => ({ domain: NO_SUCH_DOMAIN }),
  },
  {
    service: DOMAINS, rpc: "SetAsPrimary", what: "an added domain of the organization acted in",
    expect:                                   [U,   OK,    OK,  D,      OK,    D,     D,    D,    D],
    async request(s) {
      s.memo.domain = await addDomainAsAdmin(s, s.org.id);
      return { domain: s.memo.domain };
    },
    async check(s, _r, outcome) {
      const org = await orgAsAdminSees(s, s.org.id);
      expect(org?.primaryDomain, "the primary domain afterwards").toBe(outcome === OK ? s.memo.domain : s.org.primary);
    },
    async cleanup(s) {
      await must(s.admin(DOMAINS, "SetAsPrimary", { domain: s.org.primary }), "admin restores the primary domain");
    },
  },
  {
    service: DOMAINS, rpc: "SetAsPrimary", what: "a domain of the other organization, with ctx.orgId of the one acted in",
    expect:                                   [U,   NF,    NF,  D,      NF,    NF,    D,    D,    D],
    async request(s) {
      return { domain: await addDomainAsAdmin(s, s.other.id), ctx: { orgId: s.org.id } };
    },
  },
  {
    service: DOMAINS, rpc: "SetAsPrimary", what: "a domain no organization has",
    expect:                                   [U,   NF,    NF,  D,      NF,    NF,    D,    D,    D],
    request: () => ({ domain: NO_SUCH_DOMAIN }),
  },

  // PlatformActions: instance-wide, no organization has any of it.
  {
    service: ACTIONS, rpc: "CreateTarget", what: "",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => ({ target: { name: s.unique("matrix-new"), restWebhook: { url: "https://example.com/n" } } }),
  },
  {
    service: ACTIONS, rpc: "PatchTarget", what: "",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: async (s) => ({ id: await freshTarget(s), target: { timeout: "7s" } }),
  },
  {
    service: ACTIONS, rpc: "DeleteTarget", what: "",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: async (s) => ({ id: await freshTarget(s) }),
  },
  {
    service: ACTIONS, rpc: "GetTarget", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: (s) => ({ id: s.targetId }),
  },
  {
    service: ACTIONS, rpc: "SearchTargets", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
  },
  {
    service: ACTIONS, rpc: "PutExecution", what: "",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    request: (s) => ({ execution: { condition: { function: "preaccesstoken" }, targets: [s.targetId] } }),
  },
  {
    service: ACTIONS, rpc: "DeleteExecution", what: "",
    expect:                                   [U,   OK,    OK,  D,      D,     D,     D,    D,    D],
    async request(s) {
      await must(s.admin(ACTIONS, "PutExecution", { execution: { condition: { function: "preuserinfo" }, targets: [s.targetId] } }), "admin PutExecution");
      return { id: "function/preuserinfo" };
    },
  },
  {
    service: ACTIONS, rpc: "SearchExecutions", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
  },
  {
    service: ACTIONS, rpc: "ListAvailableExecutionFunctions", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
  },
  {
    service: ACTIONS, rpc: "ListAvailableExecutionMethods", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
  },
  {
    service: ACTIONS, rpc: "ListAvailableExecutionServices", what: "",
    expect:                                   [U,   OK,    OK,  OK,     D,     D,     D,    D,    D],
    request: () => ({}),
  },
];

const HTTP_STATUS: Record<Outcome, number> = { ok: 0, denied: 403, unauth: 401, notfound: 404, failed: 400 };

function outcomeOf(r: CallResult): string {
  if (r.ok) return OK;
  switch (r.code) {
    case Code.PermissionDenied:
      return D;
    case Code.Unauthenticated:
      return U;
    case Code.NotFound:
      return NF;
    case Code.FailedPrecondition:
      return FP;
    default:
      return `${Code[r.code]}`;
  }
}

describe("the expected table", () => {
  it("has a row for every RPC of the three services, and a cell for every column", () => {
    for (const service of [ORGS, DOMAINS, ACTIONS]) {
      for (const method of service.methods) {
        expect(ROWS.some((r) => r.service === service && r.rpc === method.name), `${service.name}.${method.name}`).toBe(true);
      }
    }
    for (const row of ROWS) {
      expect(row.expect, `${row.rpc} ${row.what}`).toHaveLength(COLUMNS.length);
      if (row.visible) expect(row.visible).toHaveLength(COLUMNS.length);
      expect(row.service.methods.some((m) => m.name === row.rpc), row.rpc).toBe(true);
    }
  });
});

describe.each(DATABASE_KINDS)("authorization matrix (%s)", (kind) => {
  let server: TestServer;
  let a: Org;
  let b: Org;
  let targetId: string;
  const tokens = new Map<Column, string | undefined>();
  let counter = 0;
  const unique = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 7)}`;
  const admin = (service: DescService, rpc: string, req: JsonObject) => protocolClient(service, "grpc", server.baseUrl).call(rpc, req, server.adminToken);

  async function createOrg(name: string): Promise<Org> {
    const made = await must(admin(ORGS, "CreateOrganization", { organization: { name } }), `admin creates ${name}`);
    return { id: String((made.details as JsonObject).id), primary: String(made.primaryDomain) };
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    a = await createOrg("Matrix A");
    b = await createOrg("Matrix B");
    await must(admin(DOMAINS, "AddDomain", { domain: { domain: "added-a.matrix.example" }, ctx: { orgId: a.id } }), "A's added domain");
    await must(admin(DOMAINS, "AddDomain", { domain: { domain: "added-b.matrix.example" }, ctx: { orgId: b.id } }), "B's added domain");
    const target = await admin(ACTIONS, "CreateTarget", { target: { name: "matrix-fixture", restWebhook: { url: "https://example.com/f" } } });
    expect(target.ok).toBe(true);
    targetId = idOf(target);
    const user = async (roles: Parameters<TestServer["createUser"]>[0]["roles"]) => (await server.createUser({ roles })).token;
    tokens.set("none", undefined);
    tokens.set("system", await user([{ context: "system", roles: ["SYSTEM_OWNER"] }]));
    tokens.set("iamOwner", await user([{ context: "instance", roles: ["IAM_OWNER"] }]));
    tokens.set("iamViewer", await user([{ context: "instance", roles: ["IAM_OWNER_VIEWER"] }]));
    const owner = await user([{ context: "org", contextId: a.id, roles: ["ORG_OWNER"] }]);
    const viewer = await user([{ context: "org", contextId: a.id, roles: ["ORG_OWNER_VIEWER"] }]);
    tokens.set("ownerInA", owner).set("ownerInB", owner).set("viewerInA", viewer).set("viewerInB", viewer);
    tokens.set("plain", await user([]));
  });
  afterAll(() => server?.close());

  /** A search answer against its row's "visible" cell; what the admin sees is the reference. */
  async function checkVisible(row: Row, s: Scene, r: CallResult, visible: Visible) {
    const message = (r as { message: JsonObject }).message;
    const result = (message.result ?? []) as JsonObject[];
    const total = Number((message.details as JsonObject | undefined)?.totalResult ?? 0);
    expect(total, "totalResult counts what is shown, nothing hidden").toBe(result.length);
    if (row.service === ORGS) {
      const ids = result.map((o) => String((o.details as JsonObject).id)).sort();
      if (visible === "none") expect(ids).toEqual([]);
      if (visible === "A") expect(ids).toEqual([a.id]);
      if (visible === "all") expect(ids).toEqual(expect.arrayContaining([a.id, b.id, s.defaultOrgId]));
      return;
    }
    const domains = result.map((d) => String(d.domain)).sort();
    const ofA = await must(admin(DOMAINS, "SearchDomains", { ctx: { orgId: a.id }, query: { limit: 1000 } }), "admin SearchDomains in A");
    const domainsOfA = ((ofA.result ?? []) as JsonObject[]).map((d) => String(d.domain)).sort();
    expect(domainsOfA).toEqual(expect.arrayContaining([a.primary, "added-a.matrix.example"]));
    if (visible === "none") expect(domains).toEqual([]);
    if (visible === "A") expect(domains).toEqual(domainsOfA);
    if (visible === "all") expect(domains).toEqual(expect.arrayContaining([...domainsOfA, b.primary, "added-b.matrix.example"]));
  }

  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it.each(ROWS.map((row) => [`${row.service.name}.${row.rpc} ${row.what}`.trim(), row] as const))("%s", async (_label, row) => {
      const problems: string[] = [];
      for (const [i, column] of COLUMNS.entries()) {
        const expected = row.expect[i]!;
        const inB = column === "ownerInB" || column === "viewerInB";
        const member = column.startsWith("owner") || column.startsWith("viewer");
        const org = row.fresh && !member ? await createOrg(unique("Matrix fresh")) : inB ? b : a;
        const s: Scene = { column, protocol, org, other: org.id === b.id ? a : b, a, b, defaultOrgId: server.defaultOrgId, targetId, instanceId: server.instanceId, memo: {}, admin, unique };
        try {
          const request = await row.request(s);
          const result = await protocolClient(row.service, protocol, server.baseUrl).call(row.rpc, request, tokens.get(column));
          const seen = outcomeOf(result);
          if (seen !== expected) {
            problems.push(`${column}: expected ${expected}, saw ${seen}${result.ok ? "" : ` (${result.message})`}`);
          } else {
            if (result.httpStatus !== undefined) {
              const status = HTTP_STATUS[expected];
              if (status ? result.httpStatus !== status : result.httpStatus >= 300) problems.push(`${column}: HTTP ${result.httpStatus} for ${expected}`);
            }
            if (expected === OK && row.visible) await checkVisible(row, s, result, row.visible[i]!);
          }
          await row.check?.(s, result, seen as Outcome);
          await row.cleanup?.(s);
        } catch (error) {
          problems.push(`${column}: ${(error as Error).message.split("\n")[0]}`);
        }
      }
      expect(problems, `${protocol} ${row.service.name}.${row.rpc} ${row.what}`).toEqual([]);
    });
  });

  it("left A and B as they were made (names aside): active, not the default, with their domains", async () => {
    for (const org of [a, b]) {
      const got = await must(admin(ORGS, "GetOrganization", { id: org.id }), "admin GetOrganization");
      expect(got.organization).toMatchObject({ state: "ORGANIZATION_STATE_ACTIVE", primaryDomain: org.primary });
      expect((got.organization as JsonObject).isDefault ?? false).toBe(false);
    }
    const def = await must(admin(ORGS, "GetInstanceDefault", {}), "admin GetInstanceDefault");
    expect(idOf({ ok: true, message: def.organization as JsonObject })).toBe(server.defaultOrgId);
  });

  it("an ORG_OWNER of A adds a domain to A with ctx.orgId=A; it belongs to A, and B cannot be reached", async () => {
    const owner = tokens.get("ownerInA")!;
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(DOMAINS, protocol, server.baseUrl);
      const domain = `own-${protocol}.matrix.example`;
      const added = await client.call("AddDomain", { domain: { domain }, ctx: { orgId: a.id } }, owner);
      expect(added, protocol).toMatchObject({ ok: true, message: { details: { id: domain, resourceOwner: { id: a.id } } } });
      if (protocol === "rest") expect(added.httpStatus).toBe(201);
      const mine = await client.call("SearchDomains", { ctx: { orgId: a.id }, filters: [{ domain: { domain, method: "TEXT_FILTER_METHOD_EQUALS" } }] }, owner);
      expect(mine, protocol).toMatchObject({ ok: true, message: { result: [{ domain, details: { resourceOwner: { id: a.id } } }] } });
      expect(JSON.stringify(mine), "neither primary nor verified").not.toMatch(/isPrimary|isVerified/);
      const intoB = await client.call("AddDomain", { domain: { domain: `own-b-${protocol}.matrix.example` }, ctx: { orgId: b.id } }, owner);
      expect(intoB, protocol).toMatchObject({ ok: false, code: Code.PermissionDenied });
    }
  });
});
