import { request as httpRequest } from "node:http";
import type { LookupFunction } from "node:net";
import { fromJson, toJson, type DescService, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { expect } from "vitest";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { routesOf, type Route } from "../../src/gateway/routes.js";
import { PROTOCOLS, restRequest, type CallResult, type Protocol } from "../support/clients.js";

export { PROTOCOLS, type CallResult, type Protocol };
export const INSTANCES = PlatformInstances;
export const USERS = PlatformUsers;
export const ORGS = PlatformOrganizations;
export const MEMBERS = PlatformMemberships;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = any;

/** Resolves every host name to 127.0.0.1, so that any name reaches the test server as its Host. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

export interface HostClient {
  protocol: Protocol;
  host: string;
  call(method: string, request: JsonObject, token?: string): Promise<CallResult>;
}

const ROUTES = new Map<DescService, Route[]>();
const routes = (service: DescService) => {
  let found = ROUTES.get(service);
  if (!found) ROUTES.set(service, (found = routesOf([service])));
  return found;
};

/**
 * A client of one service over one protocol that sends its calls to 127.0.0.1:<port> with
 * `host` as the Host header (`:authority` on HTTP/2), whatever the name: the way another
 * instance of the test server is reached.
 */
export function at(service: DescService, protocol: Protocol, host: string, port: number): HostClient {
  const baseUrl = `http://${host}:${port}`;
  if (protocol === "rest") {
    return {
      protocol,
      host,
      async call(name, req, token) {
        const route = routes(service).find((r) => r.method.name === name);
        if (!route) throw new Error(`no REST route for ${service.typeName}.${name}`);
        const { url, body } = restRequest(route, req, baseUrl);
        const headers: Record<string, string> = {
          ...(token && { authorization: `Bearer ${token}` }),
          ...(body !== undefined && { "content-type": "application/json" }),
        };
        const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const r = httpRequest(url, { method: route.httpMethod, lookup: toLoopback, headers, agent: false }, (res) => {
            let text = "";
            res
              .setEncoding("utf8")
              .on("data", (c: string) => (text += c))
              .on("end", () => resolve({ status: res.statusCode!, text }));
          });
          r.on("error", reject).end(body === undefined ? undefined : JSON.stringify(body));
        });
        let json: JsonObject;
        try {
          json = JSON.parse(text) as JsonObject;
        } catch {
          return { ok: false, code: Code.Unknown, message: `not JSON (HTTP ${status}): ${text.slice(0, 200)}`, httpStatus: status };
        }
        if (status >= 200 && status < 300) return { ok: true, message: json, httpStatus: status };
        return { ok: false, code: json.code as Code, message: String(json.message), httpStatus: status, details: json.details as JsonValue[] };
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
    protocol,
    host,
    async call(name, req, token) {
      const method = service.methods.find((m) => m.name === name);
      if (!method) throw new Error(`no method ${name} in ${service.typeName}`);
      let input;
      try {
        input = fromJson(method.input, req);
      } catch (error) {
        // A typed client cannot even send what does not parse.
        return { ok: false, code: Code.InvalidArgument, message: `client refused: ${String(error)}` };
      }
      try {
        const output = await client[method.localName]!(input, { headers: token ? { authorization: `Bearer ${token}` } : {} });
        return { ok: true, message: toJson(method.output, output as never) as JsonObject };
      } catch (error) {
        const e = ConnectError.from(error);
        return { ok: false, code: e.code, message: e.rawMessage };
      }
    },
  };
}

/** The message of a successful call; fails the test with the whole answer otherwise. */
export function ok(r: CallResult, label = ""): Msg {
  expect(r, `${label} ${JSON.stringify(r)}`).toMatchObject({ ok: true });
  return (r as { message: Msg }).message;
}

/** Throws (rather than asserts) so that fixtures name the step that broke. */
export async function must(r: Promise<CallResult>, what: string): Promise<Msg> {
  const result = await r;
  if (!result.ok) throw new Error(`${what}: ${Code[result.code]} ${result.message}`);
  return result.message;
}

/** HTTP status of each code on REST. */
const HTTP: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Internal]: 500,
};

/** A failure with this code (and, on REST, the matching HTTP status). */
export function failed(r: CallResult, code: Code, label = ""): { message: string } {
  expect(r, `${label} ${JSON.stringify(r)}`).toMatchObject({ ok: false, code });
  if (r.httpStatus !== undefined) expect(r.httpStatus, `${label} HTTP status`).toBe(HTTP[code]);
  return r as { message: string };
}

/** A short name for an outcome: "ok", or the code's name. */
export function outcome(r: CallResult): string {
  return r.ok ? "ok" : Code[r.code]!;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
/** A host name no other test of the run uses. */
export function uniqueDomain(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}.example`;
}

export const DAY_MS = 24 * 3600 * 1000;
export const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();

const ADMIN_PASSWORD = "Admin#Pass1";

export function humanAdmin(username: string, password: string | undefined = ADMIN_PASSWORD): JsonObject {
  return {
    username,
    human: {
      profile: { givenName: "First", familyName: "Admin" },
      email: { address: `${username}@mail.example` },
      ...(password !== undefined && { password }),
    },
  };
}

export function machineAdmin(username: string): JsonObject {
  return { username, machine: { name: `svc ${username}` } };
}

/** An Instance message as JSON: a machine administrator with a PAT unless told otherwise. */
export function instanceJson(domains: string[], extra: JsonObject = {}): JsonObject {
  return {
    name: `Instance ${domains[0] ?? "none"}`,
    domains,
    firstOrgName: "First Org",
    admin: { user: machineAdmin("first-admin"), patExpirationDate: fromNow(DAY_MS) },
    ...extra,
  };
}

export interface Created {
  id: string;
  orgId: string;
  adminUserId: string;
  adminPat: string;
  domain: string;
}

/** Creates an instance through the API on the given client (a system member's host) and returns what it answered. */
export async function createInstance(client: HostClient, token: string, domains: string[], extra: JsonObject = {}): Promise<Created> {
  const m = await must(client.call("CreateInstance", { instance: instanceJson(domains, extra) }, token), `create instance ${domains[0]}`);
  return { id: String(m.details.id), orgId: String(m.orgId), adminUserId: String(m.adminUserId), adminPat: String(m.adminPat ?? ""), domain: domains[0]! };
}

/** Repeats `fn` until it returns true or `ms` pass; returns how long it took, or -1. */
export async function pollUntil(fn: () => Promise<boolean>, ms: number, every = 50): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - started;
    if (Date.now() - started > ms) return -1;
    await sleep(every);
  }
}

export const totalOf = (m: Msg) => Number(m.details?.totalResult ?? 0);
export const idsOf = (m: Msg): string[] => ((m.result ?? []) as Msg[]).map((r) => String(r.details.id));
