import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  at,
  createInstance,
  failed,
  fromNow,
  DAY_MS,
  INSTANCES,
  instanceJson,
  machineAdmin,
  ok,
  outcome,
  PROTOCOLS,
  uniqueDomain,
  type Created,
} from "./helpers.js";

const VIOLATIONS = "type.googleapis.com/buf.validate.Violations";
const s = (n: number, c = "a") => c.repeat(n);
/** A valid host name of exactly `n` characters (labels of at most 63). */
function hostname(n: number): string {
  const labels: string[] = [];
  let left = n;
  while (left > 0) {
    const len = Math.min(63, left === 64 ? 62 : left);
    labels.push(s(len, labels.length === 0 ? "h" : "b"));
    left -= len + 1;
  }
  return labels.join(".");
}
const HOST_254 = hostname(254);
const HOST_253 = hostname(253);

function pathOf(violation: JsonObject): string {
  const elements = ((violation.field as JsonObject | undefined)?.elements ?? []) as JsonObject[];
  return elements.map((e) => `${e.fieldName}${e.index !== undefined ? `[${e.index}]` : ""}`).join(".");
}

function violationPaths(details: JsonValue[] | undefined): string[] {
  const detail = (details ?? []).find((d) => (d as JsonObject)?.["@type"] === VIOLATIONS) as JsonObject | undefined;
  expect(detail, `no ${VIOLATIONS} in ${JSON.stringify(details)}`).toBeDefined();
  return [...new Set((detail!.violations as JsonObject[]).map(pathOf))].sort();
}

interface BadRow {
  rpc: string;
  what: string;
  req: JsonObject;
  /** Violating field paths in buf.validate.Violations; null: refused by the request context, without violations. */
  fields: string[] | null;
  /** REST cannot express an empty path segment. */
  rest?: false;
}
const bad = (rpc: string, what: string, req: JsonObject, fields: string[] | null, rest?: false): BadRow => ({
  rpc,
  what,
  req,
  fields,
  ...(rest === false && { rest }),
});

/** A valid instance to spoil one field of; its domain is never created (every row must fail). */
const valid = (extra: JsonObject = {}): JsonObject => instanceJson(["never-created.example"], extra);
const create = (what: string, extra: JsonObject, fields: string[]) => bad("CreateInstance", what, { instance: valid(extra) }, fields);
const ID = "01900000-0000-7000-8000-000000000000";
// Languages are the supported ISO 639-1 codes of the language settings (docs/api.md).
const BAD_LANGUAGES = [
  ["one letter", "e"],
  ["upper case", "DE"],
  ["a region", "de-CH"],
  ["three letters", "deu"],
  ["an underscore", "en_US"],
  ["a space", "d e"],
] as const;
const BAD_DOMAINS = [
  ["a space", "a b.example"],
  ["a leading hyphen", "-x.example"],
  ["a label ending in a hyphen", "x-.example"],
  ["an empty label", "x..example"],
  ["an underscore", "x_y.example"],
  ["a 64-char label", `${s(64)}.example`],
  ["a scheme", "https://x.example"],
  ["a port", "x.example:443"],
  ["a path", "x.example/a"],
  ["254 chars", HOST_254],
  ["an empty name", ""],
] as const;

const ID_ROWS: BadRow[] = [
  ["GetInstance", {}],
  ["DeleteInstance", {}],
  ["PatchInstance", { instance: { name: "n" } }],
  ["AddInstanceDomain", { domain: { domain: "ok.example" } }],
  ["RemoveInstanceDomain", { domain: "ok.example" }],
  ["SetPrimaryInstanceDomain", { domain: "ok.example" }],
  ["Limit", { limits: { block: true } }],
].flatMap(([rpc, extra]) => [
  bad(rpc as string, "empty id", { id: "", ...(extra as JsonObject) }, ["id"], false),
  bad(rpc as string, "201-char id", { id: s(201), ...(extra as JsonObject) }, ["id"]),
]);

const BAD_ROWS: BadRow[] = [
  // CreateInstance
  bad("CreateInstance", "no instance", {}, ["instance"]),
  create("empty name", { name: "" }, ["instance.name"]),
  create("201-char name", { name: s(201) }, ["instance.name"]),
  create("no domains", { domains: [] }, ["instance.domains"]),
  create("101 domains", { domains: Array.from({ length: 101 }, (_, i) => `d${i}.example`) }, ["instance.domains"]),
  create("a duplicate domain", { domains: ["one.example", "two.example", "one.example"] }, ["instance.domains"]),
  ...BAD_DOMAINS.map(([what, domain]) => create(`a domain with ${what}`, { domains: ["fine.example", domain] }, ["instance.domains[1]"])),
  create("a domain with a trailing dot", { domains: ["fine.example."] }, ["instance.domains[0]"]),
  create("empty first_org_name", { firstOrgName: "" }, ["instance.first_org_name"]),
  create("201-char first_org_name", { firstOrgName: s(201) }, ["instance.first_org_name"]),
  create("no admin", { admin: undefined as unknown as JsonValue }, ["instance.admin"]),
  create("an admin without a user", { admin: { patExpirationDate: fromNow(DAY_MS) } }, ["instance.admin.user"]),
  create("an admin user without a type", { admin: { user: { username: "x" } } }, ["instance.admin.user.type"]),
  create("an admin username with a space", { admin: { user: machineAdmin("a b") } }, ["instance.admin.user.username"]),
  create("a human admin without a profile", { admin: { user: { username: "h", human: { email: { address: "h@mail.example" } } } } }, [
    "instance.admin.user.human.profile",
  ]),
  create(
    "a 257-char admin password",
    { admin: { user: { username: "h", human: { profile: { givenName: "g", familyName: "f" }, email: { address: "h@mail.example" }, password: s(257) } } } },
    ["instance.admin.user.human.password"],
  ),
  ...BAD_LANGUAGES.map(([what, lang]) => create(`default_language with ${what}`, { defaultLanguage: lang }, ["instance.default_language"])),
  bad("CreateInstance", "an unsupported default_language", { instance: valid({ defaultLanguage: "xx" }) }, null),
  create("password_policy.min_length 0", { passwordPolicy: { minLength: 0, requireNumber: true } }, ["instance.password_policy.min_length"]),
  create("password_policy without min_length", { passwordPolicy: {} }, ["instance.password_policy.min_length"]),
  create("password_policy.min_length 257", { passwordPolicy: { minLength: 257 } }, ["instance.password_policy.min_length"]),
  // REST reads ctx from the query string, where an empty one is no ctx at all.
  bad("CreateInstance", "an empty ctx", { instance: valid(), ctx: {} }, null, false),
  bad("CreateInstance", "an organization ctx", { instance: valid(), ctx: { orgId: "some-org" } }, null),
  // Every RPC that names an instance
  ...ID_ROWS,
  // SearchInstances
  bad("SearchInstances", "201 filters", { filters: Array.from({ length: 201 }, () => ({ name: { value: "x" } })) }, ["filters"]),
  bad("SearchInstances", "a filter with nothing set", { filters: [{}] }, ["filters[0].filter"]),
  bad("SearchInstances", "inIds with 1001 ids", { filters: [{ inIds: { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) } }] }, [
    "filters[0].in_ids.ids",
  ]),
  bad("SearchInstances", "inIds with an empty id", { filters: [{ inIds: { ids: ["a", ""] } }] }, ["filters[0].in_ids.ids[1]"]),
  bad("SearchInstances", "inIds with a 201-char id", { filters: [{ inIds: { ids: [s(201)] } }] }, ["filters[0].in_ids.ids[0]"]),
  bad("SearchInstances", "a 201-char name filter", { filters: [{ name: { value: s(201) } }] }, ["filters[0].name.value"]),
  bad("SearchInstances", "a 201-char domain filter", { filters: [{ domain: { value: s(201) } }] }, ["filters[0].domain.value"]),
  bad("SearchInstances", "an undefined text method", { filters: [{ domain: { value: "x", method: 99 } }] }, ["filters[0].domain.method"]),
  bad("SearchInstances", "a state filter without a state", { filters: [{ state: {} }] }, ["filters[0].state.state"]),
  bad("SearchInstances", "state UNSPECIFIED", { filters: [{ state: { state: "INSTANCE_STATE_UNSPECIFIED" } }] }, ["filters[0].state.state"]),
  bad("SearchInstances", "an undefined state", { filters: [{ state: { state: 99 } }] }, ["filters[0].state.state"]),
  bad("SearchInstances", "the second of two filters bad", { filters: [{ name: { value: "x" } }, { name: { value: s(201) } }] }, ["filters[1].name.value"]),
  bad("SearchInstances", "an undefined sorting column", { sortingColumn: 99 }, ["sorting_column"]),
  bad("SearchInstances", "query.limit 1001", { query: { limit: 1001 } }, ["query.limit"]),
  bad("SearchInstances", "an organization ctx", { ctx: { orgDomain: "x.example" } }, null),
  // PatchInstance
  bad("PatchInstance", "no instance", { id: ID }, ["instance"]),
  bad("PatchInstance", "empty name", { id: ID, instance: { name: "" } }, ["instance.name"]),
  bad("PatchInstance", "201-char name", { id: ID, instance: { name: s(201) } }, ["instance.name"]),
  ...BAD_LANGUAGES.map(([what, lang]) =>
    bad("PatchInstance", `default_language with ${what}`, { id: ID, instance: { defaultLanguage: lang } }, ["instance.default_language"]),
  ),
  // Well-formed, but without texts: refused by the language settings, not by the pattern.
  bad("PatchInstance", "an unsupported default_language", { id: ID, instance: { defaultLanguage: "xx" } }, null),
  bad("PatchInstance", "password_policy.min_length 0", { id: ID, instance: { passwordPolicy: { requireSymbol: true } } }, [
    "instance.password_policy.min_length",
  ]),
  bad("PatchInstance", "password_policy.min_length 257", { id: ID, instance: { passwordPolicy: { minLength: 257 } } }, ["instance.password_policy.min_length"]),
  // Domains
  bad("AddInstanceDomain", "no domain", { id: ID }, ["domain"]),
  ...BAD_DOMAINS.map(([what, domain]) => bad("AddInstanceDomain", `a domain with ${what}`, { id: ID, domain: { domain } }, ["domain.domain"])),
  bad("AddInstanceDomain", "a trailing dot", { id: ID, domain: { domain: "x.example." } }, ["domain.domain"]),
  ...["RemoveInstanceDomain", "SetPrimaryInstanceDomain"].flatMap((rpc) => [
    bad(rpc, "empty domain", { id: ID, domain: "" }, ["domain"], false),
    bad(rpc, "254-char domain", { id: ID, domain: HOST_254 }, ["domain"]),
  ]),
  // Limits
  bad("Limit", "no limits", { id: ID }, ["limits"]),
  bad("Limit", "a negative retention", { id: ID, limits: { auditLogRetention: "-1s" } }, ["limits.audit_log_retention"]),
  bad("Limit", "a negative fraction of a second", { id: ID, limits: { auditLogRetention: "-0.001s" } }, ["limits.audit_log_retention"]),
  bad("Limit", "a retention over ten years", { id: ID, limits: { auditLogRetention: "315576000.001s" } }, ["limits.audit_log_retention"]),
  bad("Limit", "a retention of a century", { id: ID, limits: { auditLogRetention: "3155760000s" } }, ["limits.audit_log_retention"]),
  bad("BulkLimit", "no limits", {}, ["limits"]),
  bad("BulkLimit", "no ids", { limits: { instanceIds: [], block: true } }, ["limits.instance_ids"]),
  bad("BulkLimit", "1001 ids", { limits: { instanceIds: Array.from({ length: 1001 }, (_, i) => `id-${i}`), block: true } }, ["limits.instance_ids"]),
  bad("BulkLimit", "a duplicate id", { limits: { instanceIds: ["a", "b", "a"], block: true } }, ["limits.instance_ids"]),
  bad("BulkLimit", "an empty id", { limits: { instanceIds: ["a", ""], block: true } }, ["limits.instance_ids[1]"]),
  bad("BulkLimit", "a 201-char id", { limits: { instanceIds: [s(201)], block: true } }, ["limits.instance_ids[0]"]),
  bad("BulkLimit", "a negative retention", { limits: { instanceIds: ["a"], auditLogRetention: "-5s" } }, ["limits.audit_log_retention"]),
  bad("BulkLimit", "a retention over ten years", { limits: { instanceIds: ["a"], auditLogRetention: "315576001s" } }, ["limits.audit_log_retention"]),
  bad("BulkLimit", "an empty ctx", { limits: { instanceIds: ["a"], block: true }, ctx: {} }, null, false),
];

/**
 * Every limit of the PlatformInstances requests is InvalidArgument (HTTP 400) on every
 * protocol, names the violating fields, and changes nothing; the values at the limits pass.
 */
describe.each(DATABASE_KINDS)("instance request validation (%s)", (kind) => {
  let server: TestServer;
  let port: number;
  let target: Created;
  const sys = (protocol: (typeof PROTOCOLS)[number]) => at(INSTANCES, protocol, "localhost", port);
  const count = async (table: "instances" | "events") =>
    Number(
      (
        await server.service.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
    target = await createInstance(sys("grpc"), server.adminToken, [uniqueDomain("val")]);
  });
  afterAll(() => server?.close());

  it(`refuses ${BAD_ROWS.length} invalid requests with InvalidArgument on every protocol, naming the fields, changing nothing`, async () => {
    const instances = await count("instances");
    const events = await count("events");
    const wrong: string[] = [];
    for (const row of BAD_ROWS) {
      // Rows naming an instance id name the existing one where the id itself is fine.
      const req = row.req.id === ID ? { ...row.req, id: target.id } : row.req;
      for (const protocol of PROTOCOLS) {
        if (protocol === "rest" && row.rest === false) continue;
        const r = await sys(protocol).call(row.rpc, req, server.adminToken);
        const label = `${row.rpc} ${row.what} over ${protocol}`;
        if (r.ok || r.code !== Code.InvalidArgument || (r.httpStatus !== undefined && r.httpStatus !== 400)) {
          wrong.push(`${label}: ${outcome(r)} ${r.ok ? "" : r.message.slice(0, 160)}`);
          continue;
        }
        if (protocol === "rest" && row.fields) {
          const paths = violationPaths(r.details);
          if (JSON.stringify(paths) !== JSON.stringify([...row.fields].sort()))
            wrong.push(`${label}: violations ${JSON.stringify(paths)}, expected ${JSON.stringify(row.fields)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await count("instances")).toBe(instances);
    expect(await count("events")).toBe(events);
    const still = ok(await sys("grpc").call("GetInstance", { id: target.id }, server.adminToken));
    expect(still.instance).toMatchObject({ state: "INSTANCE_STATE_ACTIVE", name: `Instance ${target.domain}` });
    expect(still.instance.auditLogRetention).toBeUndefined();
  });

  it("names every violation of one request, in the message and in the details", async () => {
    for (const protocol of PROTOCOLS) {
      const r = await sys(protocol).call(
        "CreateInstance",
        { instance: { name: "", domains: [], firstOrgName: s(201), defaultLanguage: "e", passwordPolicy: { minLength: 300 } } },
        server.adminToken,
      );
      const f = failed(r, Code.InvalidArgument, protocol);
      for (const field of [
        "instance.name",
        "instance.domains",
        "instance.first_org_name",
        "instance.admin",
        "instance.default_language",
        "instance.password_policy.min_length",
      ]) {
        expect(f.message, `${protocol} ${field}`).toContain(field);
      }
      if (protocol === "rest") {
        expect(violationPaths(r.ok ? [] : r.details)).toEqual([
          "instance.admin",
          "instance.default_language",
          "instance.domains",
          "instance.first_org_name",
          "instance.name",
          "instance.password_policy.min_length",
        ]);
      }
    }
  });

  it("accepts the values at every limit", async () => {
    const domains = [HOST_253, ...Array.from({ length: 99 }, (_, i) => `edge-${i}.${kind}.example`)];
    const created = ok(
      await sys("rest").call(
        "CreateInstance",
        {
          instance: instanceJson(domains, {
            name: s(200, "n"),
            firstOrgName: s(200, "o"),
            defaultLanguage: "zh",
            passwordPolicy: { minLength: 256 },
            admin: { user: machineAdmin("edge") },
          }),
        },
        server.adminToken,
      ),
    );
    const id = created.details.id as string;
    const got = ok(await sys("grpc").call("GetInstance", { id }, server.adminToken)).instance;
    expect(got.domains).toHaveLength(100);
    expect(got.domains[0]).toMatchObject({ domain: HOST_253, isPrimary: true });
    expect(got.passwordPolicy.minLength).toBe(256);
    ok(
      await sys("grpc").call(
        "PatchInstance",
        { id, instance: { name: s(200, "p"), defaultLanguage: "ja", passwordPolicy: { minLength: 1 } } },
        server.adminToken,
      ),
    );
    // Creating without a language means "en"; a patch to "" would leave the instance without one.
    expect(await sys("grpc").call("PatchInstance", { id, instance: { defaultLanguage: "" } }, server.adminToken)).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    ok(await sys("grpc").call("Limit", { id, limits: { auditLogRetention: "315576000s" } }, server.adminToken));
    ok(await sys("grpc").call("Limit", { id, limits: { auditLogRetention: "0.001s" } }, server.adminToken));
    // Limits of searches and bulk limits: at the limit the request is served (unknown ids are NotFound, not invalid).
    ok(
      await sys("grpc").call(
        "SearchInstances",
        { filters: Array.from({ length: 200 }, () => ({ name: { value: s(200), method: "TEXT_FILTER_METHOD_CONTAINS" } })), query: { limit: 1000 } },
        server.adminToken,
      ),
    );
    ok(await sys("grpc").call("SearchInstances", { filters: [{ inIds: { ids: Array.from({ length: 1000 }, (_, i) => `id-${i}`) } }] }, server.adminToken));
    failed(
      await sys("grpc").call(
        "BulkLimit",
        { limits: { instanceIds: [...Array.from({ length: 999 }, (_, i) => `id-${i}`), s(200)], block: true } },
        server.adminToken,
      ),
      Code.NotFound,
    );
    failed(await sys("grpc").call("GetInstance", { id: s(200) }, server.adminToken), Code.NotFound);
    failed(await sys("grpc").call("RemoveInstanceDomain", { id, domain: `${HOST_253.slice(0, -1)}c` }, server.adminToken), Code.NotFound);
    ok(await sys("grpc").call("DeleteInstance", { id }, server.adminToken));
  });
});
