import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { randomAlphanumeric } from "../crypto/tokens.js";
import { ConfigError } from "./env.js";

/** PLATFORM_MASTERKEY, which encrypts secrets at rest; unset only with PGlite, where resolveMasterKey generates one. */
export function masterKeySetting(env: NodeJS.ProcessEnv): { masterKey: string | undefined } {
  const masterKey = env.PLATFORM_MASTERKEY || undefined;
  if (masterKey !== undefined) checkMasterKey(masterKey);
  if (env.DATABASE_URL && !masterKey) {
    throw new ConfigError("PLATFORM_MASTERKEY is required with DATABASE_URL (exactly 32 characters)");
  }
  return { masterKey };
}

/** With PGlite and no PLATFORM_MASTERKEY, a key is generated once into the data dir. */
export async function resolveMasterKey(config: { masterKey: string | undefined; dataDir: string }): Promise<string> {
  if (config.masterKey) return config.masterKey;
  const path = join(config.dataDir, "masterkey");
  try {
    const key = (await readFile(path, "utf8")).trim();
    checkMasterKey(key, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomAlphanumeric(32);
  await writeFile(path, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

function checkMasterKey(key: string, source = "PLATFORM_MASTERKEY"): void {
  if (Buffer.byteLength(key, "utf8") !== 32) {
    throw new ConfigError(`${source} must be exactly 32 ASCII characters, got ${key.length}`);
  }
}
