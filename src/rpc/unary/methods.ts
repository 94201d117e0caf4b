import { create, isMessage, type DescMessage, type DescMethodUnary, type DescService, type Message } from "@bufbuild/protobuf";
import {
  createContextKey,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { CallHeaders } from "./call-headers.js";

/** What a protocol front end hands in: the request as parsed off the wire. */
export interface UnaryCall {
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

  constructor(private readonly interceptors: readonly Interceptor[]) {}

  /** A router that registers each service with connect-node and keeps its unary methods here. */
  recording(router: ConnectRouter): ConnectRouter {
    const service: ConnectRouter["service"] = (desc, impl, options) => {
      router.service(desc, impl, options);
      const spec = createServiceImplSpec(desc, impl);
      for (const method of desc.methods) {
        const m = spec.methods[method.localName];
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

  #chain(service: DescService, method: DescMethodUnary, impl: UnaryHandler): UnaryInvoke {
    const output: DescMessage = method.output;
    const innermost = async (req: UnaryRequest): Promise<UnaryResponse> => {
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
}

type UnaryHandler = (message: Message, context: HandlerContext) => Promise<unknown> | unknown;
