import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { startService, type Service } from "../../src/server/start.js";
import type { DatabaseTarget } from "../../src/store/database.js";
import { createTestDatabase } from "../support/database.js";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, one sample per line (comments skipped). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
export function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one value of `name` with `labels`, 0 when there is no such sample (a counter not yet counted). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = find(samples, name, labels);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

export async function scrape(port: number): Promise<{ status: number; contentType: string | null; samples: Sample[]; ms: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get("content-type"), samples: res.ok ? parseMetrics(text) : [], ms: performance.now() - started };
}

/** Collects pino's JSON lines. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
  /** Request log lines ("rpc" and "rpc failed") for a request id. */
  forRequest(requestId: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.requestId === requestId);
  }
}

export interface LoggedServer {
  service: Service;
  baseUrl: string;
  adminToken: string;
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * The real service, as test/support/server.ts starts it, but logging into `logs`. An `env`
 * value of undefined leaves that variable unset (PLATFORM_METRICS_BIND: its default applies).
 */
export async function startLoggedServer(kind: DatabaseTarget["kind"], logs: LogCapture, env: Record<string, string | undefined> = {}): Promise<LoggedServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "platform-telemetry-"));
  const database = await createTestDatabase(kind);
  const vars: Record<string, string | undefined> = {
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_PORT: "0",
    PLATFORM_BIND: "127.0.0.1",
    PLATFORM_EXTERNAL_URL: "http://localhost",
    PLATFORM_METRICS_BIND: "",
    PLATFORM_DB_POOL_MAX: "10",
    PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
    ...env,
  };
  const config = {
    ...loadConfig(Object.fromEntries(Object.entries(vars).filter(([, value]) => value !== undefined))),
    database: database.target,
  };
  let service: Service;
  try {
    service = await startService(config, createLogger("info", logs));
  } catch (error) {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    service,
    baseUrl: `http://localhost:${service.port}`,
    adminToken: (await readFile(config.adminPatPath, "utf8")).trim(),
    databaseUrl: database.target.kind === "postgres" ? database.target.url : undefined,
    async close() {
      await service.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
