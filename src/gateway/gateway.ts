import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { JsonValue, Registry } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { DomainError } from "../domain/errors.js";
import { toConnectError } from "../rpc/errors.js";
import { HTTP_STATUS, rpcStatus, rpcStatusFromConnect, type RpcStatus } from "./rpc-status.js";
import { findRoutes, type Route } from "./routes.js";
import { transcodeRequest } from "./transcode-request.js";

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

export interface GatewayOptions {
  routes: Route[];
  /** Connect handlers by procedure path; REST calls run through them and their interceptors. */
  handlers: ReadonlyMap<string, UniversalHandler>;
  registry: Registry;
  maxBodyBytes: number;
}

/** Headers the REST caller sends on that mean something to the RPC. */
const FORWARDED_HEADERS = ["authorization", "x-request-id", "user-agent", "accept-language", "traceparent"];
/** curl -d sends form encoding by default; its body is still JSON. */
const JSON_TYPES = /^(application\/(json|x-www-form-urlencoded)|[^/]+\/[^;]*\+json)(;|$)/i;

/**
 * The REST gateway, generated from the google.api.http rules. Returns false when no
 * rule's path matches, so that the next handler (OIDC, then 404) may answer.
 */
export function createRestGateway(opts: GatewayOptions) {
  return async function restGateway(req: NodeRequest, res: NodeResponse): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://gateway");
    try {
      const matches = findRoutes(opts.routes, url.pathname);
      if (matches.length === 0) return false;
      const match = matches.find((m) => m.route.httpMethod === req.method);
      if (!match) {
        res.setHeader("allow", [...new Set(matches.map((m) => m.route.httpMethod))].join(", "));
        sendStatus(res, 405, rpcStatus(Code.Unimplemented, `${req.method} is not allowed on ${url.pathname}`));
        return true;
      }
      await serve(opts, match.route, match.params, url, req, res);
    } catch (thrown) {
      const { error } = toConnectError(thrown);
      sendStatus(res, HTTP_STATUS[error.code], rpcStatus(error.code, error.rawMessage));
    }
    return true;
  };
}

async function serve(
  opts: GatewayOptions,
  route: Route,
  params: Map<string, string>,
  url: URL,
  req: NodeRequest,
  res: NodeResponse,
) {
  const body = route.body ? await readJsonBody(req, opts.maxBodyBytes) : undefined;
  if (body === TOO_LARGE) {
    sendStatus(res, 413, rpcStatus(Code.ResourceExhausted, `the request body exceeds ${opts.maxBodyBytes} bytes`));
    return;
  }
  const message = transcodeRequest(route, params, url.searchParams, body);
  const handler = opts.handlers.get(route.procedure)!;
  const header = new Headers({ "content-type": "application/json" });
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") header.set(name, value);
  }
  const host = req.headers.host ?? req.headers[":authority"];
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const uRes = await handler({
    httpVersion: req.httpVersion,
    url: `http://${host}${route.procedure}`,
    method: "POST",
    header,
    body: message,
    signal: controller.signal,
  });
  const chunks: Uint8Array[] = [];
  for await (const chunk of uRes.body ?? []) chunks.push(chunk);
  const payload = Buffer.concat(chunks);
  const requestId = uRes.header?.get("x-request-id");
  if (requestId) res.setHeader("x-request-id", requestId);
  if (uRes.status !== 200) {
    const status = rpcStatusFromConnect(parseJson(payload) ?? null, opts.registry);
    sendStatus(res, HTTP_STATUS[status.code], status);
    return;
  }
  let status = route.successStatus;
  if (route.createdField) {
    const parsed = parseJson(payload) as Record<string, JsonValue> | undefined;
    status = parsed?.[route.createdField] === true ? 201 : 200;
  }
  writeJson(res, status, payload);
}

const TOO_LARGE = Symbol("too large");

async function readJsonBody(req: NodeRequest, limit: number): Promise<JsonValue | undefined | typeof TOO_LARGE> {
  const type = req.headers["content-type"];
  if (type && !JSON_TYPES.test(type)) {
    throw new DomainError("invalid_argument", `unsupported content type ${type}: send application/json`);
  }
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) {
    req.resume();
    return TOO_LARGE;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return TOO_LARGE;
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new DomainError("invalid_argument", `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

function parseJson(payload: Buffer): JsonValue | undefined {
  try {
    return JSON.parse(payload.toString("utf8")) as JsonValue;
  } catch {
    return undefined;
  }
}

export function sendStatus(res: NodeResponse, httpStatus: number, status: RpcStatus): void {
  writeJson(res, httpStatus, Buffer.from(JSON.stringify(status)));
}

function writeJson(res: NodeResponse, status: number, payload: Buffer): void {
  // Both response types write heads alike; their declared overloads just do not unify.
  (res as ServerResponse).writeHead(status, { "content-type": "application/json", "content-length": payload.length });
  res.end(payload);
}
