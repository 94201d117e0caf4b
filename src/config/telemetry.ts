import { hostPort, integer } from "./env.js";

/** Health checks and the metrics endpoint (src/telemetry/). */
export interface TelemetrySettings {
  /** /ready and the gRPC health check answer within this, saying not ready when the database did not. */
  healthTimeoutMs: number;
  /** Where GET /metrics answers, off the tenant port; undefined turns it off. */
  metricsBind: { host: string; port: number } | undefined;
  /**
   * PLATFORM_METRICS_BIND was not set: the default port may belong to another service on the
   * host, and then the service runs without metrics instead of failing to start.
   */
  metricsBindDefaulted: boolean;
}

export function telemetrySettings(env: NodeJS.ProcessEnv): TelemetrySettings {
  return {
    healthTimeoutMs: integer(env, "PLATFORM_HEALTH_TIMEOUT_MS", 2_000, 50, 60_000),
    metricsBind: hostPort(env, "PLATFORM_METRICS_BIND", "127.0.0.1:9090"),
    // Unset, not empty: empty turns metrics off on purpose.
    metricsBindDefaulted: env.PLATFORM_METRICS_BIND === undefined,
  };
}
