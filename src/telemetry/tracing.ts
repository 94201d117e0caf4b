import type { Interceptor } from "@connectrpc/connect";
import type { QueryObserver } from "../store/scoped.js";

/** OpenTelemetry tracing of one service: a span per RPC, a child span per SQL statement. */
export interface Tracing {
  /** Outermost interceptor: starts the call's span, as a child of the caller's traceparent. */
  interceptor(): Interceptor;
  /** A span per statement, inside the call's span (the store calls it: src/store/scoped.ts). */
  queryObserver: QueryObserver;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Traces are on when an OTLP endpoint is configured the standard way
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The SDK itself reads the other
 * OTEL_* variables (protocol, headers, timeout, sampler, batch sizes, resource).
 */
function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "").split(",").map((e) => e.trim().toLowerCase());
  if (exporters.includes("none")) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Undefined, and not one OpenTelemetry module loaded, unless tracing is requested: the SDK
 * is imported only here, on demand, so a service without a collector pays nothing for it.
 * The SDK reads process.env itself, so the decision does too.
 */
export async function startTracing(): Promise<Tracing | undefined> {
  if (!tracingRequested(process.env)) return undefined;
  const { createTracing } = await import("./otel.js");
  return createTracing(process.env);
}
