import { once } from "node:events";
import type { ServerResponse } from "node:http";
import {
  fromJson,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type JsonReadOptions,
  type JsonValue,
  type JsonWriteOptions,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { errorToJson } from "@connectrpc/connect/protocol-connect";
import { invalidArgument } from "../domain/errors.js";
import { callerLeft, send, sendStatus, type NodeRequest, type NodeResponse } from "../http/respond.js";
import type { Logger } from "../log/logger.js";
import { clientAddressKey } from "../rpc/context.js";
import { readBody } from "../http/read-body.js";
import { CallHeaders } from "../rpc/unary/call-headers.js";
import { callSignal } from "../rpc/unary/exchange.js";
import type { StreamInvoke, UnaryInvoke, UnaryMethods } from "../rpc/unary/methods.js";
import { toConnectError } from "../rpc/errors.js";
import { codeName, restCallContext } from "../telemetry/call.js";
import { HTTP_STATUS, rpcStatusFromConnect } from "./rpc-status.js";
import { indexRoutes, successStatus, type Route } from "./routes.js";
import { transcodeRequest } from "./transcode-request.js";

export interface GatewayOptions {
  routes: Route[];
  /** The methods by procedure path; REST calls run through them and their interceptors. */
  methods: Pick<UnaryMethods, "get" | "stream">;
  registry: Registry;
  maxBodyBytes: number;
  /** The JSON options of the other protocols, so that answers are written alike. */
  jsonOptions: Partial<JsonReadOptions & JsonWriteOptions>;
  logger: Logger;
}

/** Headers the REST caller sends on that mean something to the RPC. */
const FORWARDED_HEADERS = ["authorization", "x-request-id", "user-agent", "accept-language", "traceparent"];
/** Headers of the RPC's answer that mean something to a REST caller. */
const RETURNED_HEADERS = ["x-request-id", "www-authenticate", "retry-after"];
/**
 * Bodies are JSON whatever these say: `curl -d` sends form encoding and `fetch` with a string
 * body text/plain. (No credentials ride along with such simple requests: tokens are headers.)
 */
const JSON_TYPES = /^(application\/(json|x-www-form-urlencoded)|text\/plain|[^/]+\/[^;]*\+json)(;|$)/i;

/**
 * The REST gateway, generated from the google.api.http rules. Returns false when no
 * rule's path matches, so that the next handler may answer.
 */
export function createRestGateway(opts: GatewayOptions) {
  const invokers = new Map<Route, Invoker>();
  for (const route of opts.routes) {
    const json = createMethodSerializationLookup(route.method, undefined, opts.jsonOptions, {
      readMaxBytes: opts.maxBodyBytes,
      writeMaxBytes: 0xffffffff,
    }).getO(false);
    if (route.method.methodKind === "server_streaming") {
      const stream = opts.methods.stream(route.procedure);
      if (!stream) throw new Error(`${route.procedure}: no server-streaming method is registered`);
      invokers.set(route, { stream, serialize: (message) => json.serialize(message as never), raw: undefined });
      continue;
    }
    const invoke = opts.methods.get(route.procedure);
    if (!invoke) throw new Error(`${route.procedure}: a REST route needs a unary or server-streaming method`);
    // An HttpBody answer is sent as itself: its field, by the name the message has in code.
    const raw = route.rawResponse === undefined ? undefined : route.method.output.fields.find((f) => f.jsonName === route.rawResponse)!.localName;
    invokers.set(route, { invoke, serialize: (message) => json.serialize(message as never), raw });
  }
  const find = indexRoutes(opts.routes);
  return async function restGateway(req: NodeRequest, res: NodeResponse, host: string): Promise<boolean> {
    // Logged by path only: a query may carry a secret (a session's token).
    const path = (req.url ?? "/").split("?", 1)[0];
    try {
      const url = new URL(req.url ?? "/", "http://gateway");
      const matches = find(url.pathname);
      if (matches.length === 0) return false;
      const match = matches.find((m) => m.route.httpMethod === req.method);
      if (!match) {
        res.setHeader("allow", [...new Set(matches.map((m) => m.route.httpMethod))].join(", "));
        sendStatus(res, 405, Code.Unimplemented, `${req.method} is not allowed on ${url.pathname}`);
        return true;
      }
      await serve(opts, invokers.get(match.route)!, match.route, match.params, url, req, res, host);
    } catch (thrown) {
      // A caller that cancelled or disconnected (the body read fails with "aborted" or
      // "Premature close"): an answer nobody reads, logged at info as on the other protocols.
      if (callerLeft(res)) {
        opts.logger.info(
          { err: thrown, path, code: codeName(Code.Canceled), status: HTTP_STATUS[Code.Canceled] },
          "the REST caller went away before its answer",
        );
        return true;
      }
      const { error, unexpected } = toConnectError(thrown);
      if (unexpected) opts.logger.error({ err: error.cause ?? error, path }, "REST gateway failed");
      sendStatus(res, HTTP_STATUS[error.code], error.code, unexpected ? "internal error" : error.rawMessage);
    }
    return true;
  };
}

/** A route's method, with its answer's JSON writer and the HttpBody field it answers raw, if any. */
type Invoker = ({ invoke: UnaryInvoke; stream?: undefined } | { stream: StreamInvoke; invoke?: undefined }) & {
  serialize: (message: Message) => Uint8Array;
  raw: string | undefined;
};

async function serve(
  opts: GatewayOptions,
  invoker: Invoker,
  route: Route,
  params: Map<string, string>,
  url: URL,
  req: NodeRequest,
  res: NodeResponse,
  host: string,
) {
  const { invoke, serialize, raw } = invoker;
  // An endpoint without a body still reads one that is sent, to refuse it (transcode-request.ts) rather than drop it.
  const body = route.body
    ? route.rawBody
      ? await readRawBody(req, opts.maxBodyBytes)
      : await readJsonBody(req, opts.maxBodyBytes)
    : announcesBody(req)
      ? await readJsonBody(req, opts.maxBodyBytes)
      : undefined;
  if (body === TOO_LARGE) {
    sendStatus(res, 413, Code.ResourceExhausted, `the request body exceeds ${opts.maxBodyBytes} bytes`);
    return;
  }
  let message: Message;
  try {
    message = fromJson(route.method.input, transcodeRequest(route, params, url.searchParams, body), opts.jsonOptions);
  } catch (error) {
    throw ConnectError.from(error, Code.InvalidArgument);
  }
  const header = new CallHeaders({ "content-type": "application/json" });
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") header.set(name, value);
  }
  if (invoker.stream) return serveStream(opts, invoker.stream, serialize, route, message, header, req, res, host);
  const { signal, end } = callSignal(res, undefined);
  let answer;
  try {
    answer = await invoke!({
      method: route.method as DescMethodUnary,
      message,
      requestMethod: "POST",
      url: `http://${host}${route.procedure}`,
      header,
      signal,
      contextValues: callContext(route, req),
    });
  } catch (thrown) {
    end();
    refuse(opts, res, thrown);
    return;
  }
  end();
  returnHeaders(res, answer.header);
  const fields = answer.message as unknown as Record<string, unknown>;
  if (raw !== undefined) return sendRaw(res, route, fields[raw] as { contentType?: string; data?: Uint8Array } | undefined);
  const payload = Buffer.from(serialize(answer.message));
  const created = route.createdLocalName !== undefined && fields[route.createdLocalName] === true;
  send(res, successStatus(route, created), "application/json", payload);
}

/** A call's error, as its RPC status; the chain's outermost interceptor (request-log.ts) has put it in the client's terms. */
function refuse(opts: GatewayOptions, res: NodeResponse, thrown: unknown): void {
  if (!(thrown instanceof ConnectError)) throw thrown;
  returnHeaders(res, thrown.metadata);
  const status = rpcStatusFromConnect(errorToJson(thrown, opts.jsonOptions), opts.registry);
  sendStatus(res, HTTP_STATUS[status.code], status.code, status.message, status.details);
}

/**
 * A server-streaming method over REST, as grpc-gateway serves one: newline-delimited JSON,
 * each answer as `{"result": …}` and an error after the first answer as a last line
 * `{"error": <status>}`. An error before the first answer is an ordinary error response. A
 * caller that stops reading holds the stream (each line waits for the socket to drain),
 * never the server's memory.
 */
async function serveStream(
  opts: GatewayOptions,
  stream: StreamInvoke,
  serialize: (message: Message) => Uint8Array,
  route: Route,
  message: Message,
  header: Headers,
  req: NodeRequest,
  res: NodeResponse,
  host: string,
) {
  const { signal, end } = callSignal(res, undefined);
  const line = (json: string) => (res as ServerResponse).write(`${json}\n`);
  let answers: AsyncIterator<Message>;
  let first: IteratorResult<Message>;
  try {
    const answer = await stream({
      method: route.method as DescMethodServerStreaming,
      message,
      requestMethod: "POST",
      url: `http://${host}${route.procedure}`,
      header,
      signal,
      contextValues: callContext(route, req),
    });
    answers = answer.message[Symbol.asyncIterator]();
    first = await answers.next();
    returnHeaders(res, answer.header);
  } catch (thrown) {
    end();
    refuse(opts, res, thrown);
    return;
  }
  (res as ServerResponse).writeHead(successStatus(route, false), { "content-type": "application/x-ndjson", "cache-control": "no-store" });
  try {
    for (let next = first; !next.done; next = await answers.next()) {
      if (!line(`{"result":${Buffer.from(serialize(next.value)).toString("utf8")}}`)) await once(res, "drain", { signal });
    }
  } catch (thrown) {
    if (!signal.aborted) {
      const { error, unexpected } = toConnectError(thrown);
      if (unexpected) opts.logger.error({ err: error.cause ?? error, path: route.procedure }, "REST stream failed");
      line(
        JSON.stringify({
          error: rpcStatusFromConnect(errorToJson(unexpected ? new ConnectError("internal error", Code.Internal) : error, opts.jsonOptions), opts.registry),
        }),
      );
    }
  } finally {
    end();
    res.end();
  }
}

function returnHeaders(res: NodeResponse, header: Headers): void {
  for (const name of RETURNED_HEADERS) {
    const value = header.get(name);
    if (value) res.setHeader(name, value);
  }
}

/**
 * A google.api.HttpBody answer as itself. Whatever it holds, it runs nothing and embeds
 * nothing from elsewhere when a browser opens it from the API's origin: such answers are
 * previews and files, never applications.
 */
function sendRaw(res: NodeResponse, route: Route, answer: { contentType?: string; data?: Uint8Array } | undefined): void {
  res.setHeader("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'");
  res.setHeader("x-content-type-options", "nosniff");
  const data = answer?.data ?? new Uint8Array(0);
  send(res, successStatus(route, false), answer?.contentType || "application/octet-stream", Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

/** A REST call's context: its caller's address, and the status its success is answered with. */
function callContext(route: Route, req: NodeRequest) {
  const created = (message: unknown) => route.createdLocalName !== undefined && (message as Record<string, unknown>)[route.createdLocalName] === true;
  return restCallContext((message) => successStatus(route, created(message))).set(clientAddressKey, req.socket.remoteAddress);
}

const TOO_LARGE = Symbol("too large");

/** An HttpBody in proto3 JSON: the bytes as they came, and what the caller said they are. */
async function readRawBody(req: NodeRequest, limit: number): Promise<JsonValue | typeof TOO_LARGE> {
  const data = await readBody(req, limit);
  if (!(data instanceof Uint8Array)) return TOO_LARGE;
  return { contentType: req.headers["content-type"] ?? "", data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") };
}

const announcesBody = (req: NodeRequest) =>
  (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0") || req.headers["transfer-encoding"] !== undefined;

async function readJsonBody(req: NodeRequest, limit: number): Promise<JsonValue | undefined | typeof TOO_LARGE> {
  const type = req.headers["content-type"];
  if (type && !JSON_TYPES.test(type)) throw invalidArgument(`unsupported content type ${type}: send application/json`);
  const data = await readBody(req, limit);
  if (!(data instanceof Uint8Array)) return TOO_LARGE;
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8").trim();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw invalidArgument(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}
