import { create, isMessage, type DescMessage, type DescMethodServerStreaming, type DescMethodUnary, type DescService, type Message } from "@bufbuild/protobuf";
import {
  createContextKey,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
  type StreamRequest,
  type StreamResponse,
} from "@connectrpc/connect";
import { CallHeaders } from "./call-headers.js";
import { once, single } from "../interceptors/server-streams.js";

/** What a protocol front end hands in: the request as parsed off the wire. */
interface UnaryCall {
  method: DescMethodUnary;
  message: Message;
  /** The caller's HTTP method (gRPC and Connect: POST). */
  requestMethod: string;
  url: string;
  header: Headers;
  signal: AbortSignal;
  contextValues: ContextValues;
  /** When the caller's deadline passes (ms since the epoch), if it sent one. */
  deadline?: number;
}

export type UnaryInvoke = (call: UnaryCall) => Promise<UnaryResponse>;

/** A server-streaming method's call as the REST gateway makes it: the answers as they come. */
export type StreamInvoke = (call: Omit<UnaryCall, "method"> & { method: DescMethodServerStreaming }) => Promise<StreamResponse>;

const deadlineKey = createContextKey<number | undefined>(undefined, { description: "the caller's deadline" });

/**
 * Every unary method the router serves, each with the one interceptor chain applied once at
 * start-up: the same interceptors and handlers as connect-node's, without its per-call
 * machinery (a linked AbortController aborted after every call, which builds a DOMException
 * with a stack trace; async-iterable pipelines around a single message; the chain applied
 * anew per call). The protocol front ends (grpc.ts, connect.ts) and the REST gateway call
 * through here; streams, and requests a front end does not take, stay with connect-node.
 * Measured in docs/benchmarks.md ("Issue 21").
 */
export class UnaryMethods {
  readonly #byPath = new Map<string, UnaryInvoke>();
  readonly #streams = new Map<string, StreamInvoke>();

  constructor(private readonly interceptors: readonly Interceptor[]) {}

  /** A router that registers each service with connect-node and keeps its unary methods here. */
  recording(router: ConnectRouter): ConnectRouter {
    const service: ConnectRouter["service"] = (desc, impl, options) => {
      router.service(desc, impl, options);
      const spec = createServiceImplSpec(desc, impl);
      for (const method of desc.methods) {
        const m = spec.methods[method.localName];
        if (m?.kind === "server_streaming")
          this.#streams.set(`/${desc.typeName}/${method.name}`, this.#streamChain(desc, m.method as DescMethodServerStreaming, m.impl as StreamHandler));
        if (m?.kind !== "unary") continue;
        this.#byPath.set(`/${desc.typeName}/${method.name}`, this.#chain(desc, m.method as DescMethodUnary, m.impl as UnaryHandler));
      }
      return recorder;
    };
    const recorder: ConnectRouter = {
      get handlers() {
        return router.handlers;
      },
      service,
      rpc: router.rpc.bind(router),
    };
    return recorder;
  }

  /** The method served at `/package.Service/Method`, if it is a unary one. */
  get(path: string): UnaryInvoke | undefined {
    return this.#byPath.get(path);
  }

  /** The server-streaming method served at `/package.Service/Method`: the REST gateway's streams. */
  stream(path: string): StreamInvoke | undefined {
    return this.#streams.get(path);
  }

  #chain(service: DescService, method: DescMethodUnary, impl: UnaryHandler): UnaryInvoke {
    const output: DescMessage = method.output;
    const innermost = async (req: UnaryRequest): Promise<UnaryResponse> => {
      const { context, header, trailer } = handlerContext(service, method, req);
      const out = await impl(req.message, context);
      const message = isMessage(out, output) ? out : create(output, out as never);
      return { stream: false, service, method, header, trailer, message };
    };
    // Outermost first, as connect-node applies them.
    const chained = this.interceptors.reduceRight((next, interceptor) => interceptor(next), innermost as Parameters<Interceptor>[0]);
    return (call) => {
      if (call.deadline !== undefined) call.contextValues.set(deadlineKey, call.deadline);
      return chained({
        stream: false,
        service,
        method,
        requestMethod: call.requestMethod,
        url: call.url,
        signal: call.signal,
        header: call.header,
        contextValues: call.contextValues,
        message: call.message,
      }) as Promise<UnaryResponse>;
    };
  }

  #streamChain(service: DescService, method: DescMethodServerStreaming, impl: StreamHandler): StreamInvoke {
    const output: DescMessage = method.output;
    const innermost = async (req: StreamRequest): Promise<StreamResponse> => {
      const { context, header, trailer } = handlerContext(service, method, req);
      const answers = impl(await single(req.message), context);
      const message = (async function* () {
        for await (const out of answers) yield isMessage(out, output) ? out : create(output, out as never);
      })();
      return { stream: true, service, method, header, trailer, message };
    };
    const chained = this.interceptors.reduceRight((next, interceptor) => interceptor(next), innermost as Parameters<Interceptor>[0]);
    return (call) =>
      // As connect-node makes the call: a stream of one request (interceptors/server-streams.ts).
      chained({
        stream: true,
        service,
        method: call.method,
        requestMethod: call.requestMethod,
        url: call.url,
        signal: call.signal,
        header: call.header,
        contextValues: call.contextValues,
        message: once(call.message),
      }) as Promise<StreamResponse>;
  }
}

/** What a handler is given, as connect-node gives it; the headers it may set go back with the answer. */
function handlerContext(service: DescService, method: DescMethodUnary | DescMethodServerStreaming, req: UnaryRequest | StreamRequest) {
  const header = new CallHeaders();
  const trailer = new CallHeaders();
  const deadline = req.contextValues.get(deadlineKey);
  const context: HandlerContext = {
    method,
    service,
    requestMethod: req.requestMethod,
    protocolName: "",
    url: req.url,
    signal: req.signal,
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestHeader: req.header,
    responseHeader: header,
    responseTrailer: trailer,
    values: req.contextValues,
  };
  return { context, header, trailer };
}

type UnaryHandler = (message: Message, context: HandlerContext) => Promise<unknown> | unknown;
type StreamHandler = (message: Message, context: HandlerContext) => AsyncIterable<unknown>;
