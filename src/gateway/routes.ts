import { getOption, hasOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";
import { methodRules } from "../rpc/method-rules.js";
import { parsePathTemplate, type PathTemplate } from "./path-template.js";

/** One REST binding of an RPC, read from its google.api.http rule. */
export interface Route {
  httpMethod: string;
  template: PathTemplate;
  /** "" none, "*" the whole request, else the request field that is the body. */
  body: string;
  /**
   * The body is a google.api.HttpBody (the field named by `body`, or with "*" the request
   * itself): grpc-gateway's convention that the HTTP body is taken raw, with its Content-Type.
   */
  rawBody: boolean;
  /**
   * The answer's field (its JSON name) that is a google.api.HttpBody named by the rule's
   * `response_body`: REST callers get its data as the body, with its content type.
   */
  rawResponse: string | undefined;
  method: DescMethod;
  /** The procedure path the Connect handler is registered under. */
  procedure: string;
  successStatus: number;
  /** JSON name of the response's bool field that turns 200 into 201. */
  createdJsonField: string | undefined;
  /** The same field's name in the response message. */
  createdLocalName: string | undefined;
}

/** A successful answer's status: with a created field, 201 when it is true and 200 when not. */
export function successStatus(route: Route, created: boolean): number {
  if (route.createdJsonField === undefined) return route.successStatus;
  return created ? 201 : 200;
}

export function routesOf(services: readonly DescService[]): Route[] {
  const routes: Route[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      for (const binding of [rule, ...rule.additionalBindings]) routes.push(routeOf(method, binding));
    }
  }
  // Most specific first, so that /targets/_search wins over /targets/{id}.
  return routes.sort((a, b) => Number(a.template.hasWildcardRest) - Number(b.template.hasWildcardRest) || b.template.literals - a.template.literals);
}

function routeOf(method: DescMethod, rule: HttpRule): Route {
  const { pattern } = rule;
  if (pattern.case === undefined) throw new Error(`${method.name}: google.api.http rule without a pattern`);
  const [httpMethod, path] = pattern.case === "custom" ? [pattern.value.kind.toUpperCase(), pattern.value.path] : [pattern.case.toUpperCase(), pattern.value];
  const rules = methodRules(method);
  const created = rules?.createdField ? method.output.fields.find((f) => f.name === rules.createdField) : undefined;
  const route: Route = {
    httpMethod,
    template: parsePathTemplate(path),
    body: rule.body,
    rawBody: bodyMessage(method, rule.body)?.typeName === HTTP_BODY,
    rawResponse: rawResponseField(method, rule.responseBody),
    method,
    procedure: `/${method.parent.typeName}/${method.name}`,
    successStatus: rules?.successStatus ?? 200,
    createdJsonField: created?.jsonName,
    createdLocalName: created?.localName,
  };
  if (rules?.createdField && !route.createdJsonField) {
    throw new Error(`${method.name}: created_field ${rules.createdField} is not a field of ${method.output.typeName}`);
  }
  if (route.body !== "" && route.body !== "*" && !method.input.fields.some((f) => f.name === route.body)) {
    throw new Error(`${method.name}: body field ${route.body} is not a field of ${method.input.typeName}`);
  }
  return route;
}

/** What a raw body fills; see Route.rawBody. */
const HTTP_BODY = "google.api.HttpBody";

function rawResponseField(method: DescMethod, responseBody: string): string | undefined {
  if (responseBody === "") return undefined;
  const field = method.output.fields.find((f) => f.name === responseBody);
  // The only use of response_body the gateway has: anything else would be silently ignored.
  if (field?.message?.typeName !== HTTP_BODY)
    throw new Error(`${method.name}: response_body ${responseBody} is not a google.api.HttpBody field of ${method.output.typeName}`);
  return field.jsonName;
}

function bodyMessage(method: DescMethod, body: string) {
  if (body === "*") return method.input;
  return body === "" ? undefined : method.input.fields.find((f) => f.name === body)?.message;
}

export type RouteMatch = { route: Route; params: Map<string, string> };

/**
 * The routes matching a path, bucketed by their first three literal segments
 * (`resources/v3alpha/targets`), so that a call tries the few of its resource instead of
 * every route's pattern; routes whose first three segments hold a variable are tried always.
 * Same matches, in the same order.
 */
export function indexRoutes(routes: readonly Route[]): (path: string) => RouteMatch[] {
  const buckets = new Map<string, { route: Route; order: number }[]>();
  const always: { route: Route; order: number }[] = [];
  routes.forEach((route, order) => {
    const tokens = route.template.source.slice(1).split("/", 4);
    const head = tokens.slice(0, 3);
    if (head.length < 3 || head.some((t) => t.includes("{") || t.includes(":"))) always.push({ route, order });
    else {
      const key = head.join("/");
      buckets.set(key, [...(buckets.get(key) ?? []), { route, order }]);
    }
  });
  return (path) => {
    const segments = path.slice(1).split("/", 3);
    // A verb (`:name`) may follow the third segment; literal segments never hold a colon.
    const third = segments[2] ?? "";
    const colon = third.indexOf(":");
    const key = `${segments[0]}/${segments[1]}/${colon >= 0 ? third.slice(0, colon) : third}`;
    const candidates = always.length === 0 ? (buckets.get(key) ?? []) : [...(buckets.get(key) ?? []), ...always].sort((a, b) => a.order - b.order);
    const matches: RouteMatch[] = [];
    for (const { route } of candidates) {
      const params = route.template.match(path);
      if (params) matches.push({ route, params });
    }
    return matches;
  };
}
