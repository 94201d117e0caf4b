import { describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { parsePathTemplate } from "../../src/gateway/path-template.js";
import { indexRoutes, routesOf } from "../../src/gateway/routes.js";
import { PLATFORM_SERVICES } from "../../src/rpc/services/index.js";

const params = (template: string, path: string) => {
  const m = parsePathTemplate(template).match(path);
  return m && Object.fromEntries(m);
};

describe("parsePathTemplate", () => {
  it("matches literal paths exactly and counts their literals", () => {
    const t = parsePathTemplate("/resources/v3alpha/targets");
    expect(t.literals).toBe(3);
    expect(t.variables).toEqual([]);
    expect(t.hasWildcardRest).toBe(false);
    expect(params("/resources/v3alpha/targets", "/resources/v3alpha/targets")).toEqual({});
    expect(t.match("/resources/v3alpha/targets/")).toBeUndefined();
    expect(t.match("/resources/v3alpha/target")).toBeUndefined();
    expect(t.match("/resources/v3alpha/targetsX")).toBeUndefined();
    expect(t.match("/x/resources/v3alpha/targets")).toBeUndefined();
  });

  it("treats dots and other literal characters literally, not as regex syntax", () => {
    const t = parsePathTemplate("/v1/a.b");
    expect(t.match("/v1/a.b")).toBeDefined();
    expect(t.match("/v1/aXb")).toBeUndefined();
  });

  it("captures {id} as exactly one segment and decodes it", () => {
    const template = "/resources/v3alpha/targets/{id}";
    expect(parsePathTemplate(template).variables).toEqual(["id"]);
    expect(params(template, "/resources/v3alpha/targets/abc-123")).toEqual({ id: "abc-123" });
    expect(params(template, "/resources/v3alpha/targets/a%20b")).toEqual({ id: "a b" });
    expect(params(template, "/resources/v3alpha/targets/a%2Fb")).toEqual({ id: "a/b" });
    expect(params(template, "/resources/v3alpha/targets/a/b")).toBeUndefined();
    expect(params(template, "/resources/v3alpha/targets/")).toBeUndefined();
  });

  it("captures {id=**} across slashes and decodes %2F", () => {
    const template = "/resources/v3alpha/executions/{id=**}";
    const t = parsePathTemplate(template);
    expect(t.hasWildcardRest).toBe(true);
    expect(t.literals).toBe(3);
    const method = "request/platform.resources.action.v3alpha.PlatformActions/GetTarget";
    expect(params(template, `/resources/v3alpha/executions/${method}`)).toEqual({ id: method });
    expect(params(template, `/resources/v3alpha/executions/${encodeURIComponent(method)}`)).toEqual({ id: method });
    expect(params(template, "/resources/v3alpha/executions/request%2fx")).toEqual({ id: "request/x" });
    expect(params(template, "/resources/v3alpha/executions/event")).toEqual({ id: "event" });
    expect(params(template, "/resources/v3alpha/executions/")).toBeUndefined();
  });

  it("supports variables with patterns, nested field paths and a verb", () => {
    const t = parsePathTemplate("/v1/{name=shelves/*}/books/{book.id}");
    expect(t.variables).toEqual(["name", "book.id"]);
    expect(t.literals).toBe(3);
    expect(Object.fromEntries(t.match("/v1/shelves/s1/books/b2")!)).toEqual({ name: "shelves/s1", "book.id": "b2" });
    expect(t.match("/v1/racks/s1/books/b2")).toBeUndefined();
    expect(t.match("/v1/shelves/s1/x/books/b2")).toBeUndefined();

    const verb = parsePathTemplate("/v1/things/{id}:cancel");
    expect(verb.variables).toEqual(["id"]);
    expect(Object.fromEntries(verb.match("/v1/things/t1:cancel")!)).toEqual({ id: "t1" });
    expect(verb.match("/v1/things/t1")).toBeUndefined();
    expect(verb.match("/v1/things/t1:undo")).toBeUndefined();
  });

  it.each([
    ["without a leading slash", "resources/v3alpha/targets"],
    ["with unbalanced braces", "/targets/{id"],
    ["with a closing brace too many", "/targets/id}"],
    ["with nested braces", "/targets/{{id}}"],
    ["with an upper-case variable", "/targets/{Id}"],
    ["with an empty variable", "/targets/{}"],
    ["with an empty variable pattern", "/targets/{id=}"],
    ["with an empty segment", "/targets//x"],
    ["with a space in a literal", "/tar gets/{id}"],
    ["with a query string", "/targets?x=1"],
  ])("rejects a template %s", (_, template) => {
    expect(() => parsePathTemplate(template)).toThrow();
  });
});

describe("routesOf(PlatformActions): the most specific route wins", () => {
  const routes = routesOf([PlatformActions]);
  const findRoutes = indexRoutes(routes);
  /** What the gateway does: the first route whose path and HTTP method match. */
  const resolve = (httpMethod: string, path: string) => {
    const match = findRoutes(path).find((m) => m.route.httpMethod === httpMethod);
    return match && { method: match.route.method.name, params: Object.fromEntries(match.params) };
  };

  it("resolves the literal _search over {id}", () => {
    expect(resolve("POST", "/resources/v3alpha/targets/_search")).toEqual({ method: "SearchTargets", params: {} });
    expect(findRoutes("/resources/v3alpha/targets/_search")[0]!.route.method.name).toBe("SearchTargets");
    expect(resolve("POST", "/resources/v3alpha/executions/_search")).toEqual({ method: "SearchExecutions", params: {} });
  });

  it("resolves /targets/{id} by HTTP method", () => {
    expect(resolve("GET", "/resources/v3alpha/targets/x")).toEqual({ method: "GetTarget", params: { id: "x" } });
    expect(resolve("PATCH", "/resources/v3alpha/targets/x")).toEqual({ method: "PatchTarget", params: { id: "x" } });
    expect(resolve("DELETE", "/resources/v3alpha/targets/x")).toEqual({ method: "DeleteTarget", params: { id: "x" } });
    expect(resolve("POST", "/resources/v3alpha/targets")).toEqual({ method: "CreateTarget", params: {} });
    expect(resolve("PUT", "/resources/v3alpha/targets/x")).toBeUndefined();
  });

  it("prefers literal execution paths over {id=**}", () => {
    expect(resolve("GET", "/resources/v3alpha/executions/functions")?.method).toBe("ListAvailableExecutionFunctions");
    expect(resolve("GET", "/resources/v3alpha/executions/methods")?.method).toBe("ListAvailableExecutionMethods");
    expect(resolve("GET", "/resources/v3alpha/executions/services")?.method).toBe("ListAvailableExecutionServices");
    expect(resolve("DELETE", "/resources/v3alpha/executions/function/preuserinfo")).toEqual({
      method: "DeleteExecution",
      params: { id: "function/preuserinfo" },
    });
    const wildcard = routes.findIndex((r) => r.template.hasWildcardRest);
    expect(routes.slice(wildcard).every((r) => r.template.hasWildcardRest)).toBe(true);
  });

  it("routes every HTTP binding of the service to its procedure", () => {
    for (const route of routes) {
      expect(route.procedure).toBe(`/${PlatformActions.typeName}/${route.method.name}`);
    }
    expect(new Set(routes.map((r) => r.method.name)).size).toBe(PlatformActions.methods.length);
  });
});

describe("the route index", () => {
  it("finds for a path of every route exactly what trying every route's pattern in order finds", () => {
    const routes = routesOf(PLATFORM_SERVICES);
    const find = indexRoutes(routes);
    for (const route of routes) {
      const path = route.template.source.replace(/\{[^}]*\}/g, "x0");
      const linear = routes.flatMap((r) => (r.template.match(path) ? [r] : []));
      expect(find(path).map((m) => m.route)).toEqual(linear);
      expect(linear.length).toBeGreaterThan(0);
    }
    expect(find("/resources/v3alpha/nothing/x")).toEqual([]);
    expect(find("/")).toEqual([]);
  });
});
