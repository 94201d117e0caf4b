import cluster from "node:cluster";
import { ConfigError, loadConfig } from "./config/config.js";
import { createLogger } from "./log/logger.js";
import { MigrationError } from "./store/migrate.js";
import { startService } from "./server/start.js";

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

  if (config.workers > 1 && cluster.isPrimary) {
    // Workers share the port through node:cluster; the primary only supervises them.
    for (let i = 0; i < config.workers; i++) cluster.fork();
    cluster.on("exit", (worker, code, signal) => {
      if (code !== 0 && !shuttingDown) {
        logger.error({ pid: worker.process.pid, code, signal }, "worker died; starting another");
        cluster.fork();
      }
    });
    let shuttingDown = false;
    const stop = () => {
      shuttingDown = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    return;
  }

  try {
    const service = await startService(config, logger);
    const shutdown = (signal: string) => {
      logger.info({ signal }, "shutting down: finishing in-flight requests");
      service.close().then(
        () => process.exit(0),
        (error) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
    };
    process.once("SIGTERM", shutdown);
    process.once("SIGINT", shutdown);
  } catch (error) {
    if (error instanceof MigrationError) logger.fatal({ migration: error.migration, err: error.cause }, error.message);
    else logger.fatal({ err: error }, "start-up failed");
    process.exit(1);
  }
}

await main();
