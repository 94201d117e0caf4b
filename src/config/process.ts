import { ConfigError, integer } from "./env.js";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The process: where it keeps its files, how many workers it forks, what it logs. */
export interface ProcessSettings {
  dataDir: string;
  workers: number;
  logLevel: string;
}

export function processSettings(env: NodeJS.ProcessEnv): ProcessSettings {
  const workers = integer(env, "PLATFORM_WORKERS", 1, 1, 256);
  if (workers > 1 && !env.DATABASE_URL) {
    throw new ConfigError("PLATFORM_WORKERS > 1 needs DATABASE_URL: embedded PGlite serves one process");
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not "${logLevel}"`);
  }
  return { dataDir: env.PLATFORM_DATA_DIR || "./data", workers, logLevel };
}
