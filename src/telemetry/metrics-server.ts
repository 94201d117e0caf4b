import http from "node:http";
import type { AddressInfo } from "node:net";
import { AggregatorRegistry, type Registry } from "prom-client";
import type { Config } from "../config/config.js";
import type { Logger } from "../log/logger.js";

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on a listener of its own (PLATFORM_METRICS_BIND, loopback by default):
 * operational data never answers on the tenant port, whatever Host a caller sends.
 */
async function serveMetrics(
  bind: { host: string; port: number },
  scrape: { contentType: string; render(): Promise<string> },
  logger: Logger,
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found: metrics are at GET /metrics\n");
      return;
    }
    scrape.render().then(
      (body) => res.writeHead(200, { "content-type": scrape.contentType }).end(req.method === "HEAD" ? undefined : body),
      (error: unknown) => {
        logger.warn({ err: error }, "metrics scrape failed");
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics unavailable\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(bind.port, bind.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // After listen, errors are failed accepts (out of descriptors): unheard, one would end the process.
  server.on("error", (error) => logger.warn({ err: error }, "the metrics listener failed to accept a connection"));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's idle keep-alive connection must not hold up shutdown.
        server.closeIdleConnections();
      }),
  };
}

/**
 * Serves the metrics where the configuration says; undefined when they are off. The default
 * port is a guess that another service on the host (a second instance of this one, a
 * Prometheus) may have taken: then the service runs without metrics and says so. A port
 * chosen explicitly that cannot be had fails the start, as any other misconfiguration.
 */
export async function serveConfiguredMetrics(
  config: Pick<Config, "metricsBind" | "metricsBindDefaulted">,
  serve: (bind: { host: string; port: number }) => Promise<MetricsServer>,
  logger: Logger,
): Promise<MetricsServer | undefined> {
  const bind = config.metricsBind;
  if (!bind) return undefined;
  try {
    return await serve(bind);
  } catch (error) {
    if (!config.metricsBindDefaulted || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    logger.warn(
      { err: error, metricsBind: `${bind.host}:${bind.port}` },
      "the default metrics port is taken: serving without metrics (set PLATFORM_METRICS_BIND to another host:port, or empty to turn them off)",
    );
    return undefined;
  }
}

/** A process's own registry, served as is. */
export function serveRegistry(bind: { host: string; port: number }, registry: Registry, logger: Logger): Promise<MetricsServer> {
  return serveMetrics(bind, { contentType: registry.contentType, render: () => registry.metrics() }, logger);
}

/**
 * With PLATFORM_WORKERS > 1 the primary serves the metrics of all workers: it asks each
 * over the cluster channel and sums (or takes the max of) their answers. Workers never bind.
 */
export function serveClusterMetrics(bind: { host: string; port: number }, logger: Logger): Promise<MetricsServer> {
  const aggregator = new AggregatorRegistry();
  return serveMetrics(bind, { contentType: aggregator.contentType, render: () => aggregator.clusterMetrics() }, logger);
}

/** In a cluster worker: answers the primary's requests with this registry. */
export function reportToPrimary(registry: Registry): void {
  // Constructing one installs prom-client's worker-side listener; setRegistries picks what it reports.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}
