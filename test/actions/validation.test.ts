import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { routesOf } from "../../src/gateway/routes.js";
import { PROTOCOLS, protocolClient, restRequest, type CallResult, type Protocol, type ProtocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VIOLATIONS = "type.googleapis.com/buf.validate.Violations";
const CONNECT_PATH = "/platform.resources.action.v3alpha.PlatformActions";
const ROUTES = routesOf([PlatformActions]);
const s = (n: number, c = "a") => c.repeat(n);
const hook = { restWebhook: { url: "https://example.com/hook" } };
/** A valid https URL of exactly 1000 characters. */
const URL_1000 = `https://example.com/${s(980)}`;
const METHOD_1001 = `/pkg.Svc/${s(992, "M")}`; // matches the method pattern: only max_len fails
const SERVICE_1001 = `pkg.${s(997, "S")}`;

/** Error text must never show SQL, stack frames or dependency paths. */
function expectNoLeak(text: string) {
  expect(text).not.toMatch(/\bselect\s/i);
  expect(text).not.toMatch(/\binsert\s/i);
  expect(text).not.toMatch(/\bat (?:async )?[\w.<>$[\]]+ \(.*:\d+:\d+\)|\bat (?:file|node):|\n\s+at /);
  expect(text).not.toContain("node_modules");
}

/** "target.rest_webhook.url", "filters[0].name.method": protovalidate's own rendering of a field path. */
function pathOf(violation: JsonObject): string {
  const elements = ((violation.field as JsonObject | undefined)?.elements ?? []) as JsonObject[];
  return elements.map((e) => `${e.fieldName}${e.index !== undefined ? `[${e.index}]` : ""}`).join(".");
}

function violationPaths(details: JsonValue[]): string[] {
  const detail = details.find((d) => (d as JsonObject)?.["@type"] === VIOLATIONS) as JsonObject | undefined;
  expect(detail, `no ${VIOLATIONS} in ${JSON.stringify(details)}`).toBeDefined();
  return [...new Set((detail!.violations as JsonObject[]).map(pathOf))].sort();
}

/** The Details of a successful manipulation. */
function detailsOf(result: CallResult): { id: string; sequence: string } {
  expect(result).toMatchObject({ ok: true });
  return (result as { message: JsonObject }).message.details as { id: string; sequence: string };
}

interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: JsonObject | undefined;
}

/** The rpcStatus every REST error answers with: exactly {code, message, details}. */
function expectRpcStatus(res: HttpResult, status: number, code: Code, fields?: string[]) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(Object.keys(res.json ?? {}).sort()).toEqual(["code", "details", "message"]);
  expect(res.json).toMatchObject({ code, message: expect.any(String), details: expect.any(Array) });
  expect(res.json!.message).not.toBe("");
  if (fields) expect(violationPaths(res.json!.details as JsonValue[])).toEqual([...fields].sort());
  expectNoLeak(res.text);
}

interface BadRow {
  rpc: string;
  what: string;
  req: JsonObject;
  /** Violating field paths reported in buf.validate.Violations. */
  fields: string[];
  /** REST cannot express an empty path segment. */
  rest?: false;
}
const bad = (rpc: string, what: string, req: JsonObject, fields: string[], rest?: false): BadRow => ({
  rpc,
  what,
  req,
  fields,
  ...(rest === false && { rest }),
});

const idRows: BadRow[] = ["GetTarget", "DeleteTarget", "DeleteExecution", "PatchTarget"].flatMap((rpc) => {
  const extra: JsonObject = rpc === "PatchTarget" ? { target: {} } : {};
  return [bad(rpc, "empty id", { id: "", ...extra }, ["id"], false), bad(rpc, "201-char id", { id: s(201), ...extra }, ["id"])];
});

const URL_CASES: [string, string][] = [
  ["empty", ""],
  ["1001 chars", `https://example.com/${s(981)}`],
  ["not a URI", "not a url"],
  ["ftp scheme", "ftp://x"],
];
const TIMEOUTS = ["0s", "-1s", "271s"];

const targetRows = (rpc: "CreateTarget" | "PatchTarget"): BadRow[] => {
  const typed = (t: JsonObject) => ("restWebhook" in t || "restRequestResponse" in t ? t : { ...hook, ...t });
  const wrap = (target: JsonObject): JsonObject => (rpc === "CreateTarget" ? { target: { name: "n", ...typed(target) } } : { id: "some-id", target });
  return [
    bad(rpc, "no target", rpc === "CreateTarget" ? {} : { id: "some-id" }, ["target"]),
    bad(rpc, "empty name", wrap({ name: "" }), ["target.name"]),
    bad(rpc, "1001-char name", wrap({ name: s(1001) }), ["target.name"]),
    ...URL_CASES.map(([what, url]) => bad(rpc, `restWebhook url ${what}`, wrap({ restWebhook: { url } }), ["target.rest_webhook.url"])),
    bad(rpc, "restRequestResponse url not a URI", wrap({ restRequestResponse: { url: "not a url" } }), ["target.rest_request_response.url"]),
    ...TIMEOUTS.map((timeout) => bad(rpc, `timeout ${timeout}`, wrap({ timeout }), ["target.timeout"])),
  ];
};

const execution = (condition: JsonObject, rest: JsonObject = { targets: ["t1"] }): JsonObject => ({ execution: { condition, ...rest } });
const conditionRows: [string, JsonObject, string][] = [
  ["request.method empty", { request: { method: "" } }, "request.method"],
  ["request.method 1001 chars", { request: { method: METHOD_1001 } }, "request.method"],
  ["request.method not /pkg.Svc/Method", { request: { method: "nope" } }, "request.method"],
  ["response.method not /pkg.Svc/Method", { response: { method: "nope" } }, "response.method"],
  ["request.service empty", { request: { service: "" } }, "request.service"],
  ["request.service 1001 chars", { request: { service: SERVICE_1001 } }, "request.service"],
  ["event.event empty", { event: { event: "" } }, "event.event"],
  ["event.event 1001 chars", { event: { event: s(1001) } }, "event.event"],
  ["event.group empty", { event: { group: "" } }, "event.group"],
  ["event.group 1001 chars", { event: { group: s(1001) } }, "event.group"],
  ["function empty", { function: "" }, "function"],
  ["function 1001 chars", { function: s(1001) }, "function"],
  ["request.all false", { request: { all: false } }, "request.all"],
  ["event.all false", { event: { all: false } }, "event.all"],
  ["request with nothing set", { request: {} }, "request.condition"],
];

const BAD_ROWS: BadRow[] = [
  ...idRows,
  ...targetRows("CreateTarget"),
  bad("CreateTarget", "no target_type", { target: { name: "n" } }, ["target.target_type"]),
  ...targetRows("PatchTarget"),
  bad("SearchTargets", "query.limit 1001", { query: { limit: 1001 } }, ["query.limit"]),
  bad("SearchTargets", "name filter of 201 chars", { filters: [{ name: { name: s(201) } }] }, ["filters[0].name.name"]),
  bad("SearchTargets", "undefined TextFilterMethod 99", { filters: [{ name: { name: "x", method: 99 } }] }, ["filters[0].name.method"]),
  bad("SearchTargets", "filter with neither name nor inIds", { filters: [{}] }, ["filters[0].filter"]),
  bad("SearchTargets", "undefined sortingColumn 99", { sortingColumn: 99 }, ["sorting_column"]),
  bad("PutExecution", "no execution", {}, ["execution"]),
  bad("PutExecution", "no condition", { execution: { targets: ["t1"] } }, ["execution.condition"]),
  bad("PutExecution", "condition with nothing set", execution({}), ["execution.condition.condition_type"]),
  ...conditionRows.map(([what, condition, path]) => bad("PutExecution", what, execution(condition), [`execution.condition.${path}`])),
  bad("PutExecution", "no targets and no includes", execution({ function: "preuserinfo" }, {}), ["execution"]),
  bad("PutExecution", "duplicate target ids", execution({ function: "preuserinfo" }, { targets: ["t1", "t1"] }), ["execution.targets"]),
  bad("SearchExecutions", "executionType UNSPECIFIED", { filters: [{ executionType: { type: "EXECUTION_TYPE_UNSPECIFIED" } }] }, [
    "filters[0].execution_type.type",
  ]),
  bad("SearchExecutions", "inConditions with an empty list", { filters: [{ inConditions: { conditions: [] } }] }, ["filters[0].in_conditions.conditions"]),
  bad("SearchExecutions", "filter with nothing set", { filters: [{}] }, ["filters[0].filter"]),
  bad("SearchExecutions", "query.limit 1001", { query: { limit: 1001 } }, ["query.limit"]),
];

describe.each(DATABASE_KINDS)("request validation (%s)", (kind) => {
  let server: TestServer;
  let clients: Record<Protocol, ProtocolClient>;
  beforeAll(async () => {
    server = await startTestServer(kind);
    clients = Object.fromEntries(PROTOCOLS.map((p) => [p, protocolClient(PlatformActions, p, server.baseUrl)])) as typeof clients;
  });
  afterAll(() => server?.close());

  const call = (protocol: Protocol, rpc: string, req: JsonObject) => clients[protocol].call(rpc, req, server.adminToken);

  async function http(path: string, init: RequestInit = {}): Promise<HttpResult> {
    const res = await fetch(`${server.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${server.adminToken}`, ...init.headers } });
    const text = await res.text();
    let json: JsonObject | undefined;
    try {
      json = JSON.parse(text) as JsonObject;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  /** The REST call of an RPC, raw, so that status, headers and the whole body can be checked. */
  function rest(rpc: string, req: JsonObject): Promise<HttpResult> {
    const route = ROUTES.find((r) => r.method.name === rpc)!;
    const { url, body } = restRequest(route, req, "");
    return http(url, {
      method: route.httpMethod,
      ...(body !== undefined && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    });
  }

  const json = (body: unknown, type = "application/json"): RequestInit => ({
    method: "POST",
    headers: { "content-type": type },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

  describe("bad input is InvalidArgument on every protocol, with the violating fields", () => {
    it.each(BAD_ROWS)("$rpc: $what", async ({ rpc, req, fields, rest: overRest }) => {
      for (const protocol of PROTOCOLS) {
        if (protocol === "rest") {
          if (overRest !== false) expectRpcStatus(await rest(rpc, req), 400, Code.InvalidArgument, fields);
          continue;
        }
        const result = await call(protocol, rpc, req);
        expect(result, protocol).toMatchObject({ ok: false, code: Code.InvalidArgument });
        const message = (result as { message: string }).message;
        for (const field of fields) expect(message, protocol).toContain(`${field}:`);
        expectNoLeak(message);
      }
    });
  });

  describe("values on the limit are accepted", () => {
    it("CreateTarget with a 1000-char URL, timeout 270s and a 1000-char name", async () => {
      for (const protocol of PROTOCOLS) {
        const name = `${protocol}-`.padEnd(1000, "n");
        const created = await call(protocol, "CreateTarget", { target: { name, restRequestResponse: { url: URL_1000 }, timeout: "270s" } });
        expect(created, protocol).toMatchObject({ ok: true, ...(protocol === "rest" && { httpStatus: 201 }) });
        const { id } = detailsOf(created);
        const got = await call(protocol, "GetTarget", { id });
        expect(got, protocol).toMatchObject({ ok: true, message: { target: { target: { name, restRequestResponse: { url: URL_1000 }, timeout: "270s" } } } });
      }
    });

    it.each([
      ["SearchTargets", "query.limit 1000", { query: { limit: 1000 } }],
      ["SearchTargets", "name filter of 200 chars", { filters: [{ name: { name: s(200), method: "TEXT_FILTER_METHOD_CONTAINS" } }] }],
      ["SearchExecutions", "query.limit 1000", { query: { limit: 1000 } }],
    ] as [string, string, JsonObject][])("%s with %s", async (rpc, _what, req) => {
      const applied = (req.query as JsonObject | undefined)?.limit;
      for (const protocol of PROTOCOLS) {
        expect(await call(protocol, rpc, req), protocol).toMatchObject({ ok: true, ...(applied && { message: { details: { appliedLimit: applied } } }) });
      }
    });

    it.each(["GetTarget", "DeleteTarget", "DeleteExecution"])("%s with a 200-char id is NotFound, not InvalidArgument", async (rpc) => {
      for (const protocol of PROTOCOLS) {
        expect(await call(protocol, rpc, { id: s(200, "z") }), protocol).toMatchObject({ ok: false, code: Code.NotFound });
      }
    });

    it("a patch that changes nothing succeeds and keeps the sequence", async () => {
      for (const protocol of PROTOCOLS) {
        const name = `unchanged-${protocol}`;
        const created = await call(protocol, "CreateTarget", { target: { name, ...hook, timeout: "10s" } });
        const { id, sequence } = detailsOf(created);
        for (const target of [{}, { name, timeout: "10s", ...hook }]) {
          const patched = await call(protocol, "PatchTarget", { id, target });
          expect(patched, `${protocol} ${JSON.stringify(target)}`).toMatchObject({ ok: true, message: { details: { id, sequence } } });
        }
        expect(await call(protocol, "GetTarget", { id }), protocol).toMatchObject({ ok: true, message: { target: { details: { sequence } } } });
      }
    });
  });

  describe("REST transport errors", () => {
    const TARGETS = "/resources/v3alpha/targets";
    const SEARCH = `${TARGETS}/_search`;

    it.each([
      ["malformed JSON", json("{not json")],
      ["an unknown field", json({ name: "x", restWebhook: { url: "https://a.b" }, bogus: 1 })],
      ["a JSON array instead of the target", json([1, 2])],
      ["unsupported content type text/xml", json("<target/>", "text/xml")],
    ])("POST targets with %s is 400 InvalidArgument", async (_what, init) => {
      expectRpcStatus(await http(TARGETS, init), 400, Code.InvalidArgument);
    });

    it.each([
      ["application/x-www-form-urlencoded", "curl -d"],
      ["text/plain;charset=UTF-8", "fetch with a string body"],
    ])("accepts a JSON body sent as %s (%s)", async (type, who) => {
      const res = await http(TARGETS, json({ name: `lenient-${who}`, ...hook }, type));
      expect(res.status, res.text).toBe(201);
      expect(res.json).toMatchObject({ details: { id: expect.any(String) } });
    });

    it("rejects a body over 1 MiB with 413 ResourceExhausted", async () => {
      const res = await http(TARGETS, json({ name: s(1024 * 1024 + 1), ...hook }));
      expectRpcStatus(res, 413, Code.ResourceExhausted);
    });

    it.each([
      ["an unknown query parameter", "?bogus=1"],
      ["query.limit=abc", "?query.limit=abc"],
      ["query.asc=maybe", "?query.asc=maybe"],
      ["query.limit=1001", "?query.limit=1001"],
      ["an undefined sortingColumn name", "?sortingColumn=NOPE"],
      ["a body field as query parameter", "?filters=x"],
      ["an offset beyond any row number", "?query.offset=18446744073709551615"],
    ])("SearchTargets with %s is 400 InvalidArgument", async (_what, qs) => {
      expectRpcStatus(await http(`${SEARCH}${qs}`, json([])), 400, Code.InvalidArgument);
    });

    it.each(["sortingColumn", "sorting_column"])("SearchTargets takes the query name %s", async (name) => {
      const res = await http(`${SEARCH}?${name}=TARGET_FIELD_NAME_NAME&query.limit=1`, json([]));
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ sortingColumn: "TARGET_FIELD_NAME_NAME", details: { appliedLimit: 1 } });
    });

    it("never lets the query string override a path variable", async () => {
      const res = await http(`${TARGETS}/some-id?id=other-id`);
      expectRpcStatus(res, 400, Code.InvalidArgument);
    });

    it("answers a wrong HTTP method on a known path with 405 and Allow", async () => {
      const res = await http(TARGETS, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.headers.get("allow")?.split(/,\s*/)).toContain("POST");
      expectRpcStatus(res, 405, Code.Unimplemented);
    });

    it("answers an unknown path with 404 rpcStatus", async () => {
      expectRpcStatus(await http("/resources/v3alpha/nothing-here"), 404, Code.NotFound);
    });
  });

  describe("Connect transport errors", () => {
    const CREATE = `${CONNECT_PATH}/CreateTarget`;
    const expectConnectError = (res: HttpResult, status: number) => {
      expect(res.status, res.text).toBe(status);
      expect(res.json).toMatchObject({ code: "invalid_argument", message: expect.any(String) });
      expectNoLeak(res.text);
    };

    it.each([
      ["at the top level", { target: { name: "connect-unknown-top", ...hook }, bogus: 1 }],
      ["inside the target", { target: { name: "connect-unknown-nested", ...hook, bogus: 1 } }],
    ])("Connect JSON with an unknown field %s is InvalidArgument", async (_where, body) => {
      expectConnectError(await http(CREATE, json(body)), 400);
    });

    it("Connect with malformed JSON is InvalidArgument (HTTP 400)", async () => {
      expectConnectError(await http(CREATE, json("{nope")), 400);
    });

    it("Connect with a wrong content type is 415, not 500", async () => {
      const res = await http(CREATE, json("<target/>", "text/xml"));
      expect(res.status).toBe(415);
      expectNoLeak(res.text);
    });
  });

  describe("errors never leak internals", () => {
    it.each([
      ["GetTarget", "an id with a NUL byte", { id: "a\u0000b" }],
      ["CreateTarget", "a name with a NUL byte", { target: { name: "nul\u0000name", ...hook } }],
      ["SearchTargets", "a name filter with a NUL byte", { filters: [{ name: { name: "a\u0000" } }] }],
    ] as [string, string, JsonObject][])("%s with %s is a client error, not Internal", async (rpc, _what, req) => {
      const serverErrors: string[] = [];
      for (const protocol of PROTOCOLS) {
        const result = await call(protocol, rpc, req);
        if (result.ok) continue;
        expectNoLeak(result.message);
        if ([Code.Internal, Code.Unknown].includes(result.code) || (result.httpStatus ?? 0) >= 500) {
          serverErrors.push(`${protocol}: code ${result.code} http ${result.httpStatus ?? "-"} "${result.message}"`);
        }
      }
      expect(serverErrors).toEqual([]);
    });
  });
});
