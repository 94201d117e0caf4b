import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestJson } from "./http-json.js";
import { freePort, startNode, waitFor } from "./processes.js";
import { ARGON2, HOST, MASTER_KEY, ROOT, USER_PASSWORD } from "./settings.js";

export interface ServiceUnderTest {
  port: number;
  /** The serving process (one worker: the child itself), for its CPU time. */
  pid: number | undefined;
  /** Sent on every call: the Host header selects the bootstrapped instance. */
  headers: { host: string; authorization: string };
  stop(): Promise<void>;
}

/** The service's own environment only: nothing of the caller's PLATFORM_* settings leaks in. */
function serviceEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("PLATFORM_") && key !== "DATABASE_URL" && key !== "LOG_LEVEL") env[key] = value;
  }
  return { ...env, ...vars };
}

/** `node dist/src/main.js` with one worker on a free port of 127.0.0.1, ready and bootstrapped. */
export async function startService(databaseUrl: string): Promise<ServiceUnderTest> {
  const dataDir = await mkdtemp(join(tmpdir(), "platform-bench-"));
  const patPath = join(dataDir, "admin.pat");
  const port = await freePort();
  // Metrics stay on, as in production, so that their cost is measured; on a port of their own.
  const metricsPort = await freePort();
  const child = startNode(join(ROOT, "dist/src/main.js"), serviceEnv({
    PLATFORM_PORT: String(port),
    PLATFORM_BIND: HOST,
    PLATFORM_EXTERNAL_URL: `http://localhost:${port}`,
    DATABASE_URL: databaseUrl,
    PLATFORM_MASTERKEY: MASTER_KEY,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_ADMIN_PAT_PATH: patPath,
    PLATFORM_WORKERS: "1",
    PLATFORM_METRICS_BIND: `${HOST}:${metricsPort}`,
    PLATFORM_PASSWORD_ARGON2_MEMORY_KIB: String(ARGON2.memoryKiB),
    PLATFORM_PASSWORD_ARGON2_ITERATIONS: String(ARGON2.iterations),
    PLATFORM_PASSWORD_ARGON2_PARALLELISM: String(ARGON2.parallelism),
    LOG_LEVEL: "warn",
  }));
  child.process.stdout!.resume();
  const stop = async () => {
    await child.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(child, "service", async () => (await requestJson(port, "GET", "/ready")).status === 200);
    const token = (await readFile(patPath, "utf8")).trim();
    return { port, pid: child.process.pid, headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Creates `count` targets over REST, eight at a time; returns their ids. */
export async function seedTargets(service: ServiceUnderTest, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 8) {
    const batch = Array.from({ length: Math.min(8, count - start) }, (_, i) =>
      requestJson(service.port, "POST", "/resources/v3alpha/targets", {
        headers: service.headers,
        body: { name: `seed-${start + i}`, restWebhook: { url: `https://example.com/hook/${start + i}` }, timeout: "10s" },
      }),
    );
    for (const res of await Promise.all(batch)) {
      if (res.status !== 201) throw new Error(`seeding a target failed: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.details.id);
    }
  }
  return ids;
}

/** Creates `count` human users with a password over REST, eight at a time; returns their ids. */
export async function seedUsers(service: ServiceUnderTest, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 8) {
    const batch = Array.from({ length: Math.min(8, count - start) }, (_, i) => {
      const username = `seed-user-${start + i}`;
      return requestJson(service.port, "POST", "/resources/v3alpha/users", {
        headers: service.headers,
        body: { username, human: { profile: { givenName: "Seed", familyName: `User ${start + i}` }, email: { address: `${username}@example.com` }, password: USER_PASSWORD } },
      });
    });
    for (const res of await Promise.all(batch)) {
      if (res.status !== 201) throw new Error(`seeding a user failed: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.details.id);
    }
  }
  return ids;
}
