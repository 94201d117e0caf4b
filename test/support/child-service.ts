import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { CHEAP_PASSWORD_HASHES } from "./server.js";

export interface ChildService {
  process: ChildProcess;
  port: number;
  baseUrl: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal) once it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How long a stopping service may take before it counts as hung. */
const STOP_TIMEOUT_MS = 25_000;

/**
 * The built service (`node dist/src/<script>`, see test/support/build.ts) as its own
 * process, the way `npm start` runs it, on a free port of 127.0.0.1.
 */
export async function spawnService(env: Record<string, string>, script = "dist/src/main.js"): Promise<ChildService> {
  const port = env.PLATFORM_PORT ? Number(env.PLATFORM_PORT) : await freePort();
  const child = spawn(process.execPath, [script], {
    env: {
      PATH: process.env.PATH ?? "",
      PLATFORM_PORT: String(port),
      PLATFORM_BIND: "127.0.0.1",
      PLATFORM_METRICS_BIND: "",
      LOG_LEVEL: "warn",
      ...CHEAP_PASSWORD_HASHES,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    process: child,
    port,
    baseUrl: `http://localhost:${port}`,
    output: () => output,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      // Past the shutdown grace (10 s by default) a stop is a hang: kill it, and say what it printed.
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      const { signal: ended } = await exited;
      clearTimeout(timer);
      if (ended === "SIGKILL" && signal !== "SIGKILL")
        throw new Error(`the service did not stop within ${STOP_TIMEOUT_MS} ms of ${signal}; its output ends:\n${output.slice(-4000)}`);
    },
  };
}

/**
 * A fresh PGlite service is ready in about 10 s on an idle two-core machine (migrations and
 * the bootstrap); beside the suite's other files, Chromium among them, it has taken over 30 s.
 */
const READY_TIMEOUT_MS = 90_000;

/** Waits until GET /ready answers 200, or the process exits, or `timeoutMs` passes. */
export async function waitReady(service: ChildService, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void service.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(`${service.baseUrl}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the service did not become ready:\n${service.output()}`);
}

/**
 * A second process of the service on the database of a test server (PostgreSQL), as
 * another node of a cluster: its own data directory, the same master key, ready to serve.
 */
export async function spawnPeer(database: { url: string }, env: Record<string, string> = {}): Promise<ChildService & { cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), "platform-peer-"));
  const peer = await spawnService({
    DATABASE_URL: database.url,
    PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_EXTERNAL_URL: "http://localhost",
    PLATFORM_DB_POOL_MAX: "4",
    ...env,
  });
  const cleanup = async () => {
    await peer.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitReady(peer);
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { ...peer, cleanup };
}
