import type { DescService, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformDomains } from "../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PROTOCOLS, protocolClient, restRequest, type CallResult, type Protocol, type ProtocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VIOLATIONS = "type.googleapis.com/buf.validate.Violations";
const ROUTES = routesOf([PlatformOrganizations, PlatformDomains]);
const s = (n: number, c = "a") => c.repeat(n);
/** A valid host name of exactly `n` characters (labels of at most 63), starting with `first`. */
function hostname(n: number, first = "a"): string {
  const labels: string[] = [];
  let left = n;
  while (left > 0) {
    const len = Math.min(63, left === 64 ? 62 : left);
    labels.push(s(len, labels.length === 0 ? first : "b"));
    left -= len + 1;
    if (left === 0) break;
  }
  return labels.join(".");
}
const HOST_253 = hostname(253);
const HOST_254 = hostname(254);

/** Error text must never show SQL, stack frames or dependency paths. */
function expectNoLeak(text: string) {
  expect(text).not.toMatch(/\bselect\s/i);
  expect(text).not.toMatch(/\binsert\s/i);
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toContain("node_modules");
}

function pathOf(violation: JsonObject): string {
  const elements = ((violation.field as JsonObject | undefined)?.elements ?? []) as JsonObject[];
  return elements.map((e) => `${e.fieldName}${e.index !== undefined ? `[${e.index}]` : ""}`).join(".");
}

function violationPaths(details: JsonValue[]): string[] {
  const detail = details.find((d) => (d as JsonObject)?.["@type"] === VIOLATIONS) as JsonObject | undefined;
  expect(detail, `no ${VIOLATIONS} in ${JSON.stringify(details)}`).toBeDefined();
  return [...new Set((detail!.violations as JsonObject[]).map(pathOf))].sort();
}

type Svc = "orgs" | "domains";
interface BadRow {
  svc: Svc;
  rpc: string;
  what: string;
  req: JsonObject;
  /** Violating field paths reported in buf.validate.Violations. */
  fields: string[];
  /** REST cannot express an empty path segment. */
  rest?: false;
}
const bad = (svc: Svc, rpc: string, what: string, req: JsonObject, fields: string[], rest?: false): BadRow => ({
  svc,
  rpc,
  what,
  req,
  fields,
  ...(rest === false && { rest }),
});

const ID_RPCS = ["GetOrganization", "DeleteOrganization", "DeactivateOrganization", "ReactivateOrganization", "SetAsInstanceDefault", "PatchOrganization"];
const idRows: BadRow[] = ID_RPCS.flatMap((rpc) => {
  const extra: JsonObject = rpc === "PatchOrganization" ? { organization: {} } : {};
  return [bad("orgs", rpc, "empty id", { id: "", ...extra }, ["id"], false), bad("orgs", rpc, "201-char id", { id: s(201), ...extra }, ["id"])];
});

const filterRows = (svc: Svc, rpc: string, textFilter: "name" | "domain"): BadRow[] => {
  const validFilter: JsonObject = svc === "orgs" ? { name: { name: "x" } } : { domain: { domain: "x" } };
  const text = (value: JsonObject): JsonObject => ({ [textFilter]: { [textFilter]: "x", ...value } });
  return [
    bad(svc, rpc, "query.limit 1001", { query: { limit: 1001 } }, ["query.limit"]),
    bad(svc, rpc, "201 filters", { filters: Array.from({ length: 201 }, () => validFilter) }, ["filters"]),
    bad(svc, rpc, `${textFilter} filter of 201 chars`, { filters: [text({ [textFilter]: s(201) })] }, [`filters[0].${textFilter}.${textFilter}`]),
    bad(svc, rpc, `undefined ${textFilter} TextFilterMethod 99`, { filters: [text({ method: 99 })] }, [`filters[0].${textFilter}.method`]),
    bad(svc, rpc, "a filter with nothing set", { filters: [{}] }, ["filters[0].filter"]),
    bad(svc, rpc, "undefined sortingColumn 99", { sortingColumn: 99 }, ["sorting_column"]),
    bad(svc, rpc, `the second of two filters (${textFilter}) bad`, { filters: [validFilter, text({ [textFilter]: s(201) })] }, [
      `filters[1].${textFilter}.${textFilter}`,
    ]),
  ];
};

const BAD_ROWS: BadRow[] = [
  bad("orgs", "CreateOrganization", "no organization", {}, ["organization"]),
  bad("orgs", "CreateOrganization", "empty name", { organization: { name: "" } }, ["organization.name"]),
  bad("orgs", "CreateOrganization", "201-char name", { organization: { name: s(201) } }, ["organization.name"]),
  bad("orgs", "CreateOrganization", "1001 admins", { organization: { name: "n", admins: Array.from({ length: 1001 }, (_, i) => `user-${i}`) } }, [
    "organization.admins",
  ]),
  bad("orgs", "CreateOrganization", "an empty admin id", { organization: { name: "n", admins: ["u1", ""] } }, ["organization.admins[1]"]),
  bad("orgs", "CreateOrganization", "a 201-char admin id", { organization: { name: "n", admins: [s(201)] } }, ["organization.admins[0]"]),
  bad("orgs", "CreateOrganization", "duplicate admin ids", { organization: { name: "n", admins: ["u1", "u2", "u1"] } }, ["organization.admins"]),
  ...idRows,
  bad("orgs", "PatchOrganization", "no organization", { id: "some-id" }, ["organization"]),
  bad("orgs", "PatchOrganization", "empty name", { id: "some-id", organization: { name: "" } }, ["organization.name"]),
  bad("orgs", "PatchOrganization", "201-char name", { id: "some-id", organization: { name: s(201) } }, ["organization.name"]),
  ...filterRows("orgs", "SearchOrganizations", "name"),
  ...filterRows("orgs", "SearchOrganizations", "domain").filter(
    (r) => !["query.limit 1001", "201 filters", "a filter with nothing set", "undefined sortingColumn 99"].includes(r.what),
  ),
  bad("orgs", "SearchOrganizations", "inIds with an empty id", { filters: [{ inIds: { ids: ["a", ""] } }] }, ["filters[0].in_ids.ids[1]"]),
  bad("orgs", "SearchOrganizations", "inIds with a 201-char id", { filters: [{ inIds: { ids: [s(201)] } }] }, ["filters[0].in_ids.ids[0]"]),
  bad("orgs", "SearchOrganizations", "inIds with 1001 ids", { filters: [{ inIds: { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) } }] }, [
    "filters[0].in_ids.ids",
  ]),
  bad("orgs", "SearchOrganizations", "state UNSPECIFIED", { filters: [{ state: { state: "ORGANIZATION_STATE_UNSPECIFIED" } }] }, ["filters[0].state.state"]),
  bad("orgs", "SearchOrganizations", "state filter without a state", { filters: [{ state: {} }] }, ["filters[0].state.state"]),
  bad("orgs", "SearchOrganizations", "undefined state 99", { filters: [{ state: { state: 99 } }] }, ["filters[0].state.state"]),
  bad("domains", "AddDomain", "no domain", {}, ["domain"]),
  bad("domains", "AddDomain", "empty domain", { domain: { domain: "" } }, ["domain.domain"]),
  ...(
    [
      ["a space", "a b"],
      ["a leading hyphen", "-x.com"],
      ["a label ending in a hyphen", "x-.com"],
      ["an empty label", "x..com"],
      ["a leading dot", ".x.com"],
      ["an underscore", "x_y.com"],
      ["a 64-char label", `${s(64)}.com`],
      ["an all-digit last label", "1.2.3.4"],
      ["a scheme", "https://x.com"],
      ["a port", "x.com:443"],
      ["254 chars", HOST_254],
    ] as const
  ).map(([what, domain]) => bad("domains", "AddDomain", `a domain with ${what}`, { domain: { domain } }, ["domain.domain"])),
  ...filterRows("domains", "SearchDomains", "domain"),
  ...["DeleteDomain", "SetAsPrimary"].flatMap((rpc) => [
    bad("domains", rpc, "empty domain", { domain: "" }, ["domain"], false),
    bad("domains", rpc, "254-char domain", { domain: HOST_254 }, ["domain"]),
  ]),
];

describe.each(DATABASE_KINDS)("organization and domain request validation (%s)", (kind) => {
  let server: TestServer;
  let clients: Record<Svc, Record<Protocol, ProtocolClient>>;
  beforeAll(async () => {
    server = await startTestServer(kind);
    const of = (svc: DescService) => Object.fromEntries(PROTOCOLS.map((p) => [p, protocolClient(svc, p, server.baseUrl)])) as Record<Protocol, ProtocolClient>;
    clients = { orgs: of(PlatformOrganizations), domains: of(PlatformDomains) };
  });
  afterAll(() => server?.close());

  const call = (svc: Svc, protocol: Protocol, rpc: string, req: JsonObject) => clients[svc][protocol].call(rpc, req, server.adminToken);
  const orgCount = async () =>
    Number(
      (
        await server.service.store.db
          .selectFrom("orgs")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const eventCount = async () =>
    Number(
      (
        await server.service.store.db
          .selectFrom("events")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** The REST call of an RPC, raw, so that the status and the whole rpcStatus body can be checked. */
  async function rest(rpc: string, req: JsonObject) {
    const route = ROUTES.find((r) => r.method.name === rpc)!;
    const { url, body } = restRequest(route, req, server.baseUrl);
    const res = await fetch(url, {
      method: route.httpMethod,
      headers: { authorization: `Bearer ${server.adminToken}`, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) as JsonObject };
  }

  describe("bad input is InvalidArgument on every protocol, with the violating fields, and writes nothing", () => {
    it.each(BAD_ROWS)("$rpc: $what", async ({ svc, rpc, req, fields, rest: overRest }) => {
      const before = await eventCount();
      for (const protocol of PROTOCOLS) {
        if (protocol === "rest") {
          if (overRest === false) continue;
          const res = await rest(rpc, req);
          expect(res.status, res.text).toBe(400);
          expect(Object.keys(res.json).sort()).toEqual(["code", "details", "message"]);
          expect(res.json.code).toBe(Code.InvalidArgument);
          expect(violationPaths(res.json.details as JsonValue[])).toEqual([...fields].sort());
          expectNoLeak(res.text);
          continue;
        }
        const result = await call(svc, protocol, rpc, req);
        expect(result, protocol).toMatchObject({ ok: false, code: Code.InvalidArgument });
        const message = (result as { message: string }).message;
        for (const field of fields) expect(message, protocol).toContain(`${field}:`);
        expectNoLeak(message);
      }
      expect(await eventCount()).toBe(before);
    });
  });

  describe("values on the limit are accepted", () => {
    const okDetails = (r: CallResult) => {
      expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
      return (r as { message: JsonObject }).message.details as { id: string; sequence: string };
    };

    it("CreateOrganization and PatchOrganization with a 200-char name; the generated label is cut to 57", async () => {
      for (const [i, protocol] of PROTOCOLS.entries()) {
        const name = `${protocol} `.padEnd(200, "n");
        const created = await call("orgs", protocol, "CreateOrganization", { organization: { name } });
        expect(created, protocol).toMatchObject({ ok: true, ...(protocol === "rest" && { httpStatus: 201 }) });
        const { id } = okDetails(created);
        const label = `${protocol}-`.padEnd(57, "n");
        expect((created as { message: JsonObject }).message.primaryDomain, protocol).toBe(`${label}.localhost`);
        expect(await call("orgs", protocol, "GetOrganization", { id })).toMatchObject({ ok: true, message: { organization: { name } } });
        const renamed = `${i}`.padEnd(200, "r");
        okDetails(await call("orgs", protocol, "PatchOrganization", { id, organization: { name: renamed } }));
        expect(await call("orgs", protocol, "GetOrganization", { id })).toMatchObject({ ok: true, message: { organization: { name: renamed } } });
      }
    });

    it("CreateOrganization with one-char names and with admins at 200-char ids is judged by the database, not validation", async () => {
      const none = await orgCount();
      for (const protocol of PROTOCOLS) {
        // A 200-char admin id passes validation: the user does not exist.
        expect(
          await call("orgs", protocol, "CreateOrganization", { organization: { name: `admin-${protocol}`, admins: [s(200, "u")] } }),
          protocol,
        ).toMatchObject({ ok: false, code: Code.NotFound });
      }
      const before = await orgCount();
      expect(before).toBe(none);
      const one = await call("orgs", "grpc", "CreateOrganization", { organization: { name: "Z" } });
      expect(one).toMatchObject({ ok: true, message: { primaryDomain: "z.localhost" } });
      expect(await orgCount()).toBe(before + 1);
    });

    it("AddDomain with a 253-char host name (the longest there is), DeleteDomain and SetAsPrimary at 253 chars", async () => {
      for (const [i, protocol] of PROTOCOLS.entries()) {
        const domain = hostname(253, "cdefg"[i]);
        expect(domain).toHaveLength(253);
        const added = await call("domains", protocol, "AddDomain", { domain: { domain: domain.toUpperCase() } });
        expect(added, protocol).toMatchObject({ ok: true, ...(protocol === "rest" && { httpStatus: 201 }) });
        expect(okDetails(added).id).toBe(domain);
        expect(okDetails(await call("domains", protocol, "SetAsPrimary", { domain })).id).toBe(domain);
        expect(okDetails(await call("domains", protocol, "SetAsPrimary", { domain: "default.localhost" })).id).toBe("default.localhost");
        expect(okDetails(await call("domains", protocol, "DeleteDomain", { domain })).id).toBe(domain);
        expect(await call("domains", protocol, "DeleteDomain", { domain }), protocol).toMatchObject({ ok: false, code: Code.NotFound });
      }
      expect(HOST_253).toHaveLength(253);
      expect(HOST_254).toHaveLength(254);
    });

    it.each([
      ["orgs", "SearchOrganizations", "query.limit 1000", { query: { limit: 1000 } }, "some"],
      [
        "orgs",
        "SearchOrganizations",
        "200 filters",
        { filters: Array.from({ length: 200 }, () => ({ state: { state: "ORGANIZATION_STATE_ACTIVE" } })) },
        "some",
      ],
      ["orgs", "SearchOrganizations", "name filter of 200 chars", { filters: [{ name: { name: s(200), method: "TEXT_FILTER_METHOD_CONTAINS" } }] }, "none"],
      [
        "orgs",
        "SearchOrganizations",
        "domain filter of 200 chars",
        { filters: [{ domain: { domain: s(200), method: "TEXT_FILTER_METHOD_ENDS_WITH_IGNORE_CASE" } }] },
        "none",
      ],
      [
        "orgs",
        "SearchOrganizations",
        "inIds with 1000 ids of 200 chars",
        { filters: [{ inIds: { ids: Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(200, "i")) } }] },
        "none",
      ],
      ["domains", "SearchDomains", "query.limit 1000", { query: { limit: 1000 } }, "some"],
      ["domains", "SearchDomains", "200 filters", { filters: Array.from({ length: 200 }, () => ({ primary: { isPrimary: true } })) }, "some"],
      [
        "domains",
        "SearchDomains",
        "domain filter of 200 chars",
        { filters: [{ domain: { domain: s(200), method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] },
        "none",
      ],
    ] as [Svc, string, string, JsonObject, "some" | "none"][])("%s %s with %s", async (svc, rpc, _what, req, expected) => {
      const applied = (req.query as JsonObject | undefined)?.limit;
      for (const protocol of PROTOCOLS) {
        const result = await call(svc, protocol, rpc, req);
        expect(result, protocol).toMatchObject({ ok: true, ...(applied && { message: { details: { appliedLimit: applied } } }) });
        const found = ((result as { message: JsonObject }).message.result ?? []) as JsonObject[];
        if (expected === "none") expect(found, protocol).toEqual([]);
        else expect(found.length, protocol).toBeGreaterThan(0);
      }
    });

    it.each(ID_RPCS)("%s with a 200-char id is NotFound, not InvalidArgument", async (rpc) => {
      for (const protocol of PROTOCOLS) {
        const req: JsonObject = { id: s(200, "z"), ...(rpc === "PatchOrganization" && { organization: { name: "x" } }) };
        expect(await call("orgs", protocol, rpc, req), protocol).toMatchObject({ ok: false, code: Code.NotFound });
      }
    });
  });

  it("refuses a ctx that names no context, and organization contexts for organizations, on every typed protocol", async () => {
    for (const protocol of PROTOCOLS.filter((p) => p !== "rest")) {
      expect(await call("orgs", protocol, "GetInstanceDefault", { ctx: {} }), protocol).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await call("domains", protocol, "SearchDomains", { ctx: {} }), protocol).toMatchObject({ ok: false, code: Code.InvalidArgument });
    }
    for (const protocol of PROTOCOLS) {
      const refused = await call("orgs", protocol, "SearchOrganizations", { ctx: { orgId: server.defaultOrgId } });
      expect(refused, protocol).toMatchObject({ ok: false, code: Code.InvalidArgument, ...(protocol === "rest" && { httpStatus: 400 }) });
      expect(await call("domains", protocol, "SearchDomains", { ctx: { orgId: server.defaultOrgId } }), protocol).toMatchObject({ ok: true });
    }
  });

  describe("REST transport errors", () => {
    const http = async (path: string, init: RequestInit) => {
      const res = await fetch(`${server.baseUrl}/resources/v3alpha${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", ...init.headers },
      });
      return { status: res.status, json: (await res.json()) as JsonObject };
    };
    it.each([
      ["POST /organizations with malformed JSON", "/organizations", "POST", "{nope"],
      ["POST /organizations with an unknown field", "/organizations", "POST", JSON.stringify({ name: "x", bogus: 1 })],
      ["POST /organizations with admins not a list", "/organizations", "POST", JSON.stringify({ name: "x", admins: "u1" })],
      ["POST /domains with an unknown field", "/domains", "POST", JSON.stringify({ domain: "x.example", primary: true })],
      ["POST /organizations/_search with an undefined sortingColumn", "/organizations/_search?sortingColumn=NOPE", "POST", "[]"],
      ["POST /organizations/_search with query.limit=1001", "/organizations/_search?query.limit=1001", "POST", "[]"],
      ["POST /domains/_search with an undefined sortingColumn", "/domains/_search?sortingColumn=ORGANIZATION_FIELD_NAME_NAME", "POST", "[]"],
      ["POST /domains/_search with query.limit=abc", "/domains/_search?query.limit=abc", "POST", "[]"],
      ["PATCH /organizations/{id} with id in the query too", "/organizations/a?id=b", "PATCH", "{}"],
      ["GET /organizations/_default with an unknown query parameter", "/organizations/_default?bogus=1", "GET", undefined],
    ] as [string, string, string, string | undefined][])("%s is 400 InvalidArgument", async (_what, path, method, body) => {
      const res = await http(path, { method, ...(body !== undefined && { body }) });
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json).toMatchObject({ code: Code.InvalidArgument, message: expect.any(String), details: expect.any(Array) });
    });
  });
});
