import { fromJson, toJson, type DescMethod, type DescService, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { routesOf, type Route } from "../../src/gateway/routes.js";

export type Protocol = "grpc" | "grpc-web" | "connect" | "connect-h2" | "rest";
export const PROTOCOLS: Protocol[] = ["grpc", "grpc-web", "connect", "connect-h2", "rest"];

export type CallResult =
  { ok: true; message: JsonObject; httpStatus?: number } | { ok: false; code: Code; message: string; httpStatus?: number; details?: JsonValue[] };

/** Calls any RPC of a service over one protocol, with JSON in and out, so that tests compare protocols. */
export interface ProtocolClient {
  protocol: Protocol;
  call(method: string, request: JsonObject, token?: string): Promise<CallResult>;
}

export function protocolClient(service: DescService, protocol: Protocol, baseUrl: string): ProtocolClient {
  if (protocol === "rest") return restClient(service, baseUrl);
  const transport = transportFor(protocol, baseUrl);
  const client = createClient(service, transport) as unknown as Record<string, (req: unknown, opts: unknown) => Promise<unknown>>;
  return {
    protocol,
    async call(name, request, token) {
      const method = methodOf(service, name);
      const headers = token ? { authorization: `Bearer ${token}` } : {};
      let input;
      try {
        input = fromJson(method.input, request);
      } catch (error) {
        // Clients of typed protocols cannot even send what does not parse.
        return { ok: false, code: Code.InvalidArgument, message: String(error) };
      }
      try {
        const output = await client[method.localName]!(input, { headers });
        return { ok: true, message: toJson(method.output, output as never) as JsonObject };
      } catch (error) {
        const e = ConnectError.from(error);
        return { ok: false, code: e.code, message: e.rawMessage };
      }
    },
  };
}

const transports = new Map<string, Transport>();

/**
 * One transport per protocol and server, as a real client keeps: a transport per call
 * opened an HTTP/2 connection per call, which both ends paid for and the server held open
 * until its idle timeout.
 */
export function transportFor(protocol: Exclude<Protocol, "rest">, baseUrl: string): Transport {
  const key = `${protocol} ${baseUrl}`;
  let transport = transports.get(key);
  if (!transport) transports.set(key, (transport = newTransport(protocol, baseUrl)));
  return transport;
}

function newTransport(protocol: Exclude<Protocol, "rest">, baseUrl: string): Transport {
  switch (protocol) {
    case "grpc":
      return createGrpcTransport({ baseUrl });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1" });
    case "connect":
      return createConnectTransport({ baseUrl, httpVersion: "1.1" });
    case "connect-h2":
      return createConnectTransport({ baseUrl, httpVersion: "2" });
  }
}

function methodOf(service: DescService, name: string): DescMethod {
  const method = service.methods.find((m) => m.name === name);
  if (!method) throw new Error(`no method ${name} in ${service.typeName}`);
  return method;
}

/** Builds the REST call from the method's HTTP rule: the reverse of the gateway. */
function restClient(service: DescService, baseUrl: string): ProtocolClient {
  const routes = routesOf([service]);
  return {
    protocol: "rest",
    async call(name, request, token) {
      const route = routes.find((r) => r.method.name === name)!;
      const { url, body } = restRequest(route, request, baseUrl);
      // An HttpBody goes as the raw body with its content type (the gateway's convention).
      const raw = route.rawBody && body !== undefined ? (body as { contentType?: string; data?: string }) : undefined;
      const res = await fetch(url, {
        method: route.httpMethod,
        headers: {
          ...(token && { authorization: `Bearer ${token}` }),
          ...(body !== undefined && { "content-type": raw ? (raw.contentType ?? "") : "application/json" }),
        },
        ...(body !== undefined && { body: raw ? Buffer.from(raw.data ?? "", "base64") : JSON.stringify(body) }),
      });
      // An HttpBody answer comes as itself; put back in its field as the other protocols give it.
      if (res.ok && route.rawResponse !== undefined) {
        const data = Buffer.from(await res.arrayBuffer()).toString("base64");
        return { ok: true, message: { [route.rawResponse]: { contentType: res.headers.get("content-type") ?? "", data } }, httpStatus: res.status };
      }
      const json = (await res.json()) as JsonObject;
      if (res.ok) return { ok: true, message: json, httpStatus: res.status };
      return { ok: false, code: json.code as Code, message: String(json.message), httpStatus: res.status, details: json.details as JsonValue[] };
    },
  };
}

export function restRequest(route: Route, request: JsonObject, baseUrl: string): { url: string; body: JsonValue | undefined } {
  const rest: JsonObject = { ...request };
  let path = route.template.source;
  for (const variable of route.template.variables) {
    const field = route.method.input.fields.find((f) => f.name === variable)!;
    const value = String(rest[field.jsonName] ?? "");
    delete rest[field.jsonName];
    path = path.replace(/\{[^}]+\}/, encodeURIComponent(value));
  }
  let body: JsonValue | undefined;
  if (route.body === "*") {
    body = rest;
  } else if (route.body) {
    const field = route.method.input.fields.find((f) => f.name === route.body)!;
    body = rest[field.jsonName];
    delete rest[field.jsonName];
  }
  const query = new URLSearchParams();
  const flatten = (prefix: string, value: JsonValue) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) flatten(prefix ? `${prefix}.${k}` : k, v!);
    } else if (Array.isArray(value)) {
      for (const v of value) query.append(prefix, String(v));
    } else query.append(prefix, String(value));
  };
  if (route.body !== "*") flatten("", rest);
  const qs = query.toString();
  return { url: `${baseUrl}${path}${qs ? `?${qs}` : ""}`, body };
}
