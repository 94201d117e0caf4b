// The OpenTelemetry SDK, loaded only through tracing.ts when a collector is configured.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type TextMapGetter, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, detectResources, envDetector, hostDetector, processDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { codeName, outcomeOf, protocolOf, traceIdKey, watchStream, type Outcome } from "./call.js";
import type { QueryObserver } from "../store/scoped.js";

const SERVICE_NAME = "platform-identity";
const SHUTDOWN_FLUSH_MS = 3_000;

/** Codes that mean the server failed, not the caller (OpenTelemetry's rule for gRPC servers). */
const SERVER_FAULTS = new Set<Outcome>([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

let contextManagerSet = false;

/**
 * A Tracing (tracing.ts), which checks the shape where startTracing returns it: this module
 * is loaded only on demand, by tracing.ts, and imports nothing back from it.
 */
export async function createTracing(env: NodeJS.ProcessEnv) {
  const exporter = await exporterFor(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf");
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over our default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": SERVICE_NAME }))
    .merge(detectResources({ detectors: [hostDetector, processDetector, envDetector] }));
  // BasicTracerProvider reads OTEL_TRACES_SAMPLER(_ARG), BatchSpanProcessor OTEL_BSP_*.
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // Parent and child spans find each other through the active context: one async-local
  // store per process, shared by every service in it.
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const tracer = provider.getTracer(SERVICE_NAME);
  return {
    interceptor: () => rpcSpans(tracer),
    queryObserver: statementSpans(tracer),
    // An unreachable collector must not hold up the process's exit past a short flush.
    shutdown: () => Promise.race([provider.shutdown(), new Promise<void>((done) => setTimeout(done, SHUTDOWN_FLUSH_MS).unref())]),
  };
}

/** http/protobuf is the OTLP default; grpc would need another transport, and is refused at start. */
async function exporterFor(protocol: string): Promise<SpanExporter> {
  switch (protocol.trim()) {
    case "http/protobuf":
      return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
    case "http/json":
      return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
    default:
      throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`);
  }
}

/**
 * One server span per call, named and attributed as OpenTelemetry's RPC conventions say;
 * the caller's W3C traceparent (forwarded by the REST gateway too) makes it a child.
 */
function rpcSpans(tracer: Tracer): Interceptor {
  const propagator = new W3CTraceContextPropagator();
  return (next) => async (req) => {
    const parent = propagator.extract(ROOT_CONTEXT, req.header, headerGetter);
    const protocol = protocolOf(req);
    const connect = protocol === "connect" || protocol === "rest";
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "rpc.system": connect ? "connect_rpc" : "grpc",
          "rpc.service": req.service.typeName,
          "rpc.method": req.method.name,
          "platform.rpc.protocol": protocol,
        },
      },
      parent,
    );
    req.contextValues.set(traceIdKey, span.spanContext().traceId);
    const end = (thrown: unknown, requestId: string | null | undefined) => {
      const outcome = outcomeOf(req.signal, thrown);
      const attributes: Attributes = { "rpc.grpc.status_code": outcome };
      if (connect && outcome !== 0) attributes["rpc.connect_rpc.error_code"] = codeName(outcome);
      if (requestId) attributes["platform.request_id"] = requestId;
      span.setAttributes(attributes);
      if (SERVER_FAULTS.has(outcome)) span.setStatus({ code: SpanStatusCode.ERROR, message: thrown instanceof Error ? thrown.message : undefined });
      span.end();
    };
    let res;
    try {
      res = await context.with(trace.setSpan(parent, span), () => next(req));
    } catch (error) {
      end(error, error instanceof ConnectError ? error.metadata.get("x-request-id") : undefined);
      throw error;
    }
    const requestId = res.header.get("x-request-id");
    if (!res.stream) {
      end(undefined, requestId);
      return res;
    }
    return { ...res, message: watchStream(res.message, (thrown) => end(thrown, requestId)) };
  };
}

/** A client span per statement, only inside a call's span: start-up and scrapes stay untraced. */
function statementSpans(tracer: Tracer): QueryObserver {
  return (statement) => {
    const active = context.active();
    if (!trace.getSpan(active)) return undefined;
    const operation = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? "QUERY";
    const table = /\b(?:from|into|update)\s+"?([\w.]+)"?/i.exec(statement)?.[1];
    const span: Span = tracer.startSpan(
      table ? `${operation} ${table}` : operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": "postgresql",
          "db.operation.name": operation,
          // Parameters travel separately ($1, $2): the text carries no values, no secrets.
          "db.query.text": statement,
          ...(table && { "db.collection.name": table }),
        },
      },
      active,
    );
    return (error) => {
      if (error !== undefined) {
        const code = (error as { code?: unknown }).code;
        if (typeof code === "string") span.setAttribute("db.response.status_code", code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end();
    };
  };
}
