import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { DatabaseTarget } from "../store/database.js";
import { randomAlphanumeric } from "../crypto/tokens.js";
import { FEATURE_DEFAULTS, isFeatureName, type FeatureSet } from "../domain/feature/catalog.js";

export interface Config {
  port: number;
  bind: string;
  externalUrl: URL;
  database: DatabaseTarget;
  dataDir: string;
  /** Unset only with PGlite, where resolveMasterKey generates one into the data dir. */
  masterKey: string | undefined;
  adminPatPath: string;
  workers: number;
  logLevel: string;
  tls: { certPath: string; keyPath: string } | undefined;
  /** Origins allowed for browser calls; ["*"] allows any. */
  corsOrigins: string[];
  maxBodyBytes: number;
  /** System defaults of the feature flags. */
  features: FeatureSet;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, "PLATFORM_PORT", 8080, 0, 65535);
  const dataDir = env.PLATFORM_DATA_DIR || "./data";
  const externalUrl = url(env.PLATFORM_EXTERNAL_URL || `http://localhost:${port}`);
  const databaseUrl = env.DATABASE_URL;
  const masterKey = env.PLATFORM_MASTERKEY || undefined;
  if (masterKey !== undefined) checkMasterKey(masterKey);
  if (databaseUrl && !masterKey) {
    throw new ConfigError("PLATFORM_MASTERKEY is required with DATABASE_URL (exactly 32 characters)");
  }
  const workers = integer(env, "PLATFORM_WORKERS", 1, 1, 256);
  if (workers > 1 && !databaseUrl) {
    throw new ConfigError("PLATFORM_WORKERS > 1 needs DATABASE_URL: embedded PGlite serves one process");
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not "${logLevel}"`);
  }
  const cert = env.PLATFORM_TLS_CERT_PATH;
  const key = env.PLATFORM_TLS_KEY_PATH;
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError("PLATFORM_TLS_CERT_PATH and PLATFORM_TLS_KEY_PATH go together");
  }
  return {
    port,
    bind: env.PLATFORM_BIND || "0.0.0.0",
    externalUrl,
    database: databaseUrl ? { kind: "postgres", url: databaseUrl } : { kind: "pglite", dataDir: join(dataDir, "pgdata") },
    dataDir,
    masterKey,
    adminPatPath: env.PLATFORM_ADMIN_PAT_PATH || join(dataDir, "admin.pat"),
    workers,
    logLevel,
    tls: cert && key ? { certPath: cert, keyPath: key } : undefined,
    corsOrigins: (env.PLATFORM_CORS_ORIGINS || "*").split(",").map((o) => o.trim()).filter(Boolean),
    maxBodyBytes: integer(env, "PLATFORM_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    features: features(env.PLATFORM_FEATURES),
  };
}

/** With PGlite and no PLATFORM_MASTERKEY, a key is generated once into the data dir. */
export async function resolveMasterKey(config: Config): Promise<string> {
  if (config.masterKey) return config.masterKey;
  const path = join(config.dataDir, "masterkey");
  try {
    const key = (await readFile(path, "utf8")).trim();
    checkMasterKey(key, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const key = randomAlphanumeric(32);
  await writeFile(path, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

function checkMasterKey(key: string, source = "PLATFORM_MASTERKEY"): void {
  if (Buffer.byteLength(key, "utf8") !== 32) {
    throw new ConfigError(`${source} must be exactly 32 ASCII characters, got ${key.length}`);
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not "${raw}"`);
  }
  return value;
}

function url(raw: string): URL {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
    return parsed;
  } catch {
    throw new ConfigError(`PLATFORM_EXTERNAL_URL must be an http(s) URL, not "${raw}"`);
  }
}

/** `PLATFORM_FEATURES=token_exchange=on,actions=off` changes the system defaults. */
function features(raw: string | undefined): FeatureSet {
  const set: FeatureSet = { ...FEATURE_DEFAULTS };
  for (const item of (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const [name, value] = item.split("=");
    if (!name || !isFeatureName(name) || (value !== "on" && value !== "off")) {
      throw new ConfigError(
        `PLATFORM_FEATURES item "${item}" must be <flag>=on|off with a flag of ${Object.keys(FEATURE_DEFAULTS).join(", ")}`,
      );
    }
    set[name] = value === "on";
  }
  return set;
}
