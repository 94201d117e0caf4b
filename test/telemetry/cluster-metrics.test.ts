import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, spawnService, type ChildService } from "../support/child-service.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { scrape, valueOf } from "./support.js";

const CALLS = 20;

/** One REST call on a connection of its own, so that the primary deals calls out to every worker. */
function restCall(port: number, token: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = http.get(
      {
        host: "127.0.0.1",
        port,
        path: "/resources/v3alpha/executions/functions",
        agent: false,
        headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` },
      },
      (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode!));
      },
    );
    req.on("error", fail);
  });
}

/**
 * The built service (test/support/build.ts) with PLATFORM_WORKERS=2, as production runs
 * it: the primary serves every worker's metrics. Needs PostgreSQL (PGlite serves one process).
 */
describe.runIf(process.env.TEST_DATABASE_URL)("metrics with PLATFORM_WORKERS=2 (postgres)", () => {
  let dataDir: string;
  let database: TestDatabase;
  let service: ChildService;
  let metricsPort: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "platform-cluster-"));
    database = await createTestDatabase("postgres");
    metricsPort = await freePort();
    service = await spawnService({
      PLATFORM_WORKERS: "2",
      DATABASE_URL: (database.target as { url: string }).url,
      PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_METRICS_BIND: `127.0.0.1:${metricsPort}`,
      PLATFORM_DB_POOL_MAX: "4",
      LOG_LEVEL: "info",
    });
    // Both workers up; expect.poll works only inside a test.
    for (let waited = 0; (service.output().match(/"msg":"serving"/g) ?? []).length < 2; waited += 200) {
      if (waited > 60_000 || service.process.exitCode !== null) throw new Error(`the service did not start:\n${service.output()}`);
      await new Promise((done) => setTimeout(done, 200));
    }
  });

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const lines = () =>
    service
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("the primary alone binds the metrics port and sums what every worker counted", async () => {
    const token = (await readFile(join(dataDir, "admin.pat"), "utf8")).trim();
    for (let i = 0; i < CALLS; i++) expect(await restCall(service.port, token)).toBe(200);

    const servedBy = new Set(
      lines()
        .filter((l) => l.msg === "rpc" && l.code === "ok")
        .map((l) => l.pid),
    );
    expect(servedBy.size).toBe(2);
    expect(lines().filter((l) => l.msg === "serving the workers' metrics")).toHaveLength(1);
    expect(service.output()).not.toMatch(/EADDRINUSE|start-up failed|worker died/);

    const { status, samples } = await scrape(metricsPort);
    expect(status).toBe(200);
    const ok = { method: "ListAvailableExecutionFunctions", protocol: "rest", code: "ok" };
    expect(valueOf(samples, "platform_rpc_requests_total", ok)).toBe(CALLS);
    expect(valueOf(samples, "platform_rpc_duration_seconds_count", ok)).toBe(CALLS);

    // Both workers read the same event store: the largest position, not the sum of two.
    const client = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await client.connect();
    const { rows } = await client.query<{ p: string }>("select max(position) as p from events");
    await client.end();
    expect(valueOf(samples, "platform_eventstore_position")).toBe(Number(rows[0]!.p));
    expect(valueOf(samples, "platform_eventstore_up")).toBe(1);
  });
});
