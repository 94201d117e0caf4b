import cluster from "node:cluster";
import type { Interceptor } from "@connectrpc/connect";
import type { QueryObserver } from "../store/scoped.js";
import type { Config } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import { reportToPrimary, serveConfiguredMetrics, serveRegistry, type MetricsServer } from "./metrics-server.js";
import { ServiceMetrics } from "./metrics.js";
import { startTracing, type Tracing } from "./tracing.js";

/** Metrics always (they cost a few counters), traces when a collector is configured. */
export interface Telemetry {
  readonly metrics: ServiceMetrics;
  readonly tracing: Tracing | undefined;
  /** Ahead of the interceptor chain: they observe the answer the client gets. */
  interceptors(): Interceptor[];
  /** Sees every statement; undefined when nothing observes them. */
  queryObserver: QueryObserver | undefined;
  /**
   * Serves the metrics on PLATFORM_METRICS_BIND; undefined when that is off (or unset and its
   * default port taken), and in a cluster worker, whose metrics the primary collects and serves for all.
   */
  serve(logger: Logger): Promise<MetricsServer | undefined>;
  close(): Promise<void>;
}

export async function startTelemetry(config: Config): Promise<Telemetry> {
  const metrics = new ServiceMetrics(config.healthTimeoutMs);
  const tracing = await startTracing();
  return {
    metrics,
    tracing,
    interceptors: () => [...(tracing ? [tracing.interceptor()] : []), metrics.interceptor()],
    queryObserver: tracing?.queryObserver,
    async serve(logger) {
      if (cluster.isWorker) {
        reportToPrimary(metrics.registry);
        return undefined;
      }
      return serveConfiguredMetrics(config, (bind) => serveRegistry(bind, metrics.registry, logger), logger);
    },
    close: async () => {
      await tracing?.shutdown();
    },
  };
}
