import cluster from "node:cluster";
import { ConfigError, loadConfig, type Config } from "./config/config.js";
import { createLogger, type Logger } from "./log/logger.js";
import { DataDirInUse } from "./store/data-dir-lock.js";
import { MigrationError } from "./store/migrate.js";
import { startService } from "./server/start.js";
import { serveClusterMetrics, serveConfiguredMetrics } from "./telemetry/metrics-server.js";

/** A worker that dies at once would otherwise be restarted in a tight loop. */
const RESTART_DELAY_MS = 1_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) await supervise(config, logger);
  else await serve(config, logger);
}

/**
 * Workers share the port through node:cluster; the primary supervises them and serves
 * their metrics, collected from each over the cluster channel (workers never bind it).
 */
async function supervise(config: Config, logger: Logger): Promise<void> {
  try {
    const metrics = await serveConfiguredMetrics(config, (bind) => serveClusterMetrics(bind, logger), logger);
    if (metrics) logger.info({ metricsPort: metrics.port, workers: config.workers }, "serving the workers' metrics");
  } catch (error) {
    logger.fatal({ err: error }, "start-up failed: cannot serve metrics");
    process.exit(1);
  }
  let stopping = false;
  // Counted here, not read from cluster.workers: Node removes a worker from it only after both
  // its 'exit' and 'disconnect', in either order, so the last exit can still see itself listed.
  const running = new Set<number>();
  const fork = () => running.add(cluster.fork().id);
  for (let i = 0; i < config.workers; i++) fork();
  cluster.on("exit", (worker, code, signal) => {
    running.delete(worker.id);
    if (stopping) {
      if (running.size === 0) process.exit(0);
      return;
    }
    if (code === 0) return;
    logger.error({ workerPid: worker.process.pid, code, signal }, "worker died; starting another");
    // Not after a stop: a worker started then would serve on with nobody to stop it.
    setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // None left (all died, their restarts pending): no exit event will come to end the primary.
    if (running.size === 0) process.exit(0);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    // Workers bound their own shutdown; this bounds waiting for one that hangs before its handler.
    setTimeout(() => {
      logger.error({ timeoutMs: config.http.shutdownTimeoutMs }, "workers did not stop in time; exiting");
      process.exit(1);
    }, config.http.shutdownTimeoutMs + 1_000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

async function serve(config: Config, logger: Logger): Promise<void> {
  let service;
  try {
    service = await startService(config, logger);
  } catch (error) {
    if (error instanceof MigrationError) logger.fatal({ migration: error.migration, err: error.cause }, error.message);
    else if (error instanceof DataDirInUse) {
      logger.fatal({ dataDir: error.dir, holderPid: error.pid }, error.message);
      // Said plainly too: a person who ran npm start twice reads the terminal, not JSON.
      process.stderr.write(`${error.message}\n`);
    } else logger.fatal({ err: error }, "start-up failed");
    process.exit(1);
  }
  let stopping: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    // A second signal (Ctrl-C reaches workers and primary alike) must not cut the drain short.
    stopping ??= (async () => {
      logger.info({ signal }, "shutting down: finishing in-flight requests");
      // A shutdown that hangs (a connection never given back, a stuck statement) must not keep
      // a supervisor or a deployment waiting for ever.
      setTimeout(() => {
        logger.error({ timeoutMs: config.http.shutdownTimeoutMs }, "shutdown did not finish in time; exiting");
        process.exit(1);
      }, config.http.shutdownTimeoutMs).unref();
      try {
        await service.close();
        process.exit(0);
      } catch (error) {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      }
    })();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

await main();
