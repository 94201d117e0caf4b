import type { DescMethodUnary, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  type UniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  errorToJsonBytes,
  parseContentType as connectContentType,
  parseTimeout as connectTimeout,
} from "@connectrpc/connect/protocol-connect";
import { parseTimeout as grpcTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { parseBinaryRequest } from "../binary-input.js";
import { readBody } from "../../http/read-body.js";
import { CallHeaders } from "./call-headers.js";
import { callSignal, nodeHeaders, tooLarge, writeAnswer } from "./exchange.js";
import type { UnaryInvoke } from "./methods.js";

/** Hands a request to connect-node, with the body bytes a front end already read. */
export type ToConnect = (body?: Uint8Array) => void;

/**
 * gRPC and Connect unary calls served through UnaryMethods: the common shape of each
 * (gRPC: HTTP/2, one uncompressed message; Connect: a POST, JSON or proto, uncompressed),
 * answered as connect-node answers, with its own helpers for the wire formats (timeouts,
 * compression, trailers, error bodies). Anything else (gRPC-web, compressed requests,
 * Connect GET, a body that is not one plain message) goes to connect-node, before or
 * after its body was read. Returns false when the request is not taken at all.
 */
export function unaryFrontEnds(options: UniversalHandlerOptions) {
  const serializations = new Map<DescMethodUnary, MethodSerializationLookup<never, never>>();
  const serializationOf = (method: DescMethodUnary) => {
    let s = serializations.get(method);
    if (!s) serializations.set(method, (s = createMethodSerializationLookup(method, options.binaryOptions, options.jsonOptions, options) as never));
    return s as MethodSerializationLookup<never, never>;
  };
  const grpcCompression = (accepted: string | null) => compressionNegotiate(options.acceptCompression, null, accepted, "grpc-accept-encoding").response;
  const connectCompression = (accepted: string | null) => compressionNegotiate(options.acceptCompression, null, accepted, "accept-encoding").response;

  async function grpc(
    req: NodeRequest,
    res: NodeResponse,
    invoke: UnaryInvoke,
    method: DescMethodUnary,
    contextValues: ContextValues,
    toConnect: ToConnect,
  ): Promise<void> {
    const header = CallHeaders.fromIncoming(req.headers);
    const timeout = grpcTimeout(header.get("grpc-timeout"), options.maxTimeoutMs);
    const { signal, end } = callSignal(res, timeout.timeoutMs);
    const compression = grpcCompression(header.get("grpc-accept-encoding"));
    const responseHeader = new CallHeaders({ "content-type": "application/grpc+proto" });
    if (compression) responseHeader.set("grpc-encoding", compression.name);
    const trailer = new CallHeaders({ "grpc-status": "0" });
    let body: Uint8Array = new Uint8Array(0);
    try {
      if (timeout.error) throw timeout.error;
      const read = await readBody(req, options.readMaxBytes + 5);
      if (!(read instanceof Uint8Array)) throw tooLarge(read.tooLarge - 5, options.readMaxBytes);
      const length = read.length >= 5 ? Buffer.from(read.buffer, read.byteOffset, read.length).readUInt32BE(1) : -1;
      if (length > options.readMaxBytes) throw tooLarge(length, options.readMaxBytes);
      // One plain message, as nearly every client sends; connect-node reads anything else.
      if (read[0] !== 0 || read.length !== 5 + length) {
        end();
        return toConnect(read);
      }
      const message = parseBinaryRequest(method.input, read.subarray(5));
      const answer = await invoke({ method, message, requestMethod: "POST", url: urlOf(req), header, signal, contextValues, ...deadline(timeout.timeoutMs) });
      answer.header.forEach((value, key) => responseHeader.set(key, value));
      answer.trailer.forEach((value, key) => trailer.set(key, value));
      let data = serializationOf(method)
        .getO(true)
        .serialize(answer.message as never);
      let flags = 0;
      if (compression && data.byteLength >= options.compressMinBytes) {
        data = await compression.compress(data);
        flags = 1;
      }
      body = envelope(flags, data);
    } catch (error) {
      setTrailerStatus(trailer, asConnectError(error));
    } finally {
      end();
    }
    writeAnswer(res, 200, nodeHeaders(responseHeader), body, nodeHeaders(trailer));
  }

  async function connect(
    req: NodeRequest,
    res: NodeResponse,
    invoke: UnaryInvoke,
    method: DescMethodUnary,
    binary: boolean,
    contextValues: ContextValues,
  ): Promise<void> {
    const header = CallHeaders.fromIncoming(req.headers);
    const timeout = connectTimeout(header.get("connect-timeout-ms"), options.maxTimeoutMs);
    const { signal, end } = callSignal(res, timeout.timeoutMs);
    const compression = connectCompression(header.get("accept-encoding"));
    const responseHeader = new CallHeaders({ "content-type": binary ? "application/proto" : "application/json" });
    let status = 200;
    let body: Uint8Array;
    try {
      if (timeout.error) throw timeout.error;
      const read = await readBody(req, options.readMaxBytes);
      if (!(read instanceof Uint8Array)) throw tooLarge(read.declared ? read.tooLarge : undefined, options.readMaxBytes);
      const message: Message = binary ? parseBinaryRequest(method.input, read) : serializationOf(method).getI(false).parse(read);
      const answer = await invoke({ method, message, requestMethod: "POST", url: urlOf(req), header, signal, contextValues, ...deadline(timeout.timeoutMs) });
      answer.header.forEach((value, key) => responseHeader.set(key, value));
      answer.trailer.forEach((value, key) => responseHeader.set(`trailer-${key}`, value));
      body = serializationOf(method)
        .getO(binary)
        .serialize(answer.message as never);
    } catch (thrown) {
      const error = asConnectError(thrown);
      status = codeToHttpStatus(error.code);
      responseHeader.set("content-type", "application/json");
      error.metadata.forEach((value, key) => responseHeader.set(key, value));
      body = errorToJsonBytes(error, options.jsonOptions);
    } finally {
      end();
    }
    if (compression && body.byteLength >= options.compressMinBytes) {
      body = await compression.compress(body);
      responseHeader.set("content-encoding", compression.name);
    }
    responseHeader.set("content-length", String(body.byteLength));
    writeAnswer(res, status, nodeHeaders(responseHeader), body);
  }

  return function serveUnary(
    req: NodeRequest,
    res: NodeResponse,
    invoke: UnaryInvoke,
    method: DescMethodUnary,
    contextValues: ContextValues,
    toConnect: ToConnect,
  ): Promise<void> | undefined {
    if (req.method !== "POST") return undefined;
    const type = req.headers["content-type"];
    if (type === "application/grpc" || type === "application/grpc+proto") {
      const encoding = req.headers["grpc-encoding"];
      if (req.httpVersionMajor !== 2 || (encoding !== undefined && encoding !== "identity")) return undefined;
      return grpc(req, res, invoke, method, contextValues, toConnect);
    }
    const connectType = type === undefined ? undefined : connectContentType(type);
    if (!connectType || connectType.stream) return undefined;
    const encoding = req.headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") return undefined;
    return connect(req, res, invoke, method, connectType.binary, contextValues);
  };
}

function asConnectError(error: unknown): ConnectError {
  return error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}

function envelope(flags: number, data: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(5 + data.byteLength);
  out[0] = flags;
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
}

/**
 * The scheme, the authority and the path, as connect-node's adapter builds it. A path, as
 * every gRPC and Connect client sends, is appended as it is: the URL parser's normalizing
 * (about 1 µs) changes nothing of what is read from it, the host (interceptors/tenant.ts).
 */
function urlOf(req: NodeRequest): string {
  const secure = "encrypted" in req.socket && req.socket.encrypted === true;
  const authority = "authority" in req ? req.authority : req.headers.host;
  const origin = `${secure ? "https" : "http"}://${authority}`;
  const path = req.url ?? "";
  return path.startsWith("/") && !path.startsWith("//") ? origin + path : new URL(path, origin).toString();
}

function deadline(timeoutMs: number | undefined): { deadline?: number } {
  return timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs };
}
