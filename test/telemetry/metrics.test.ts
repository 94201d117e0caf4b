import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { h1 } from "../server/raw-http.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { find, scrape, valueOf } from "./support.js";

const SERVICE = PlatformActions.typeName;
/** The scrape's database read gives up after this (PLATFORM_HEALTH_TIMEOUT_MS). */
const READ_TIMEOUT_MS = 300;
const PROTOCOLS: Protocol[] = ["grpc", "grpc-web", "connect", "rest"];

describe.each(DATABASE_KINDS)("Prometheus metrics (%s)", (kind) => {
  let server: TestServer;
  let metricsPort: number;
  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_METRICS_BIND: "127.0.0.1:0", PLATFORM_HEALTH_TIMEOUT_MS: String(READ_TIMEOUT_MS) });
    metricsPort = server.service.metricsPort!;
  });
  afterAll(() => server?.close());

  const maxPosition = async () =>
    Number(
      (
        await server.service.store.db
          .selectFrom("events")
          .select((eb) => eb.fn.max("position").as("p"))
          .executeTakeFirst()
      )?.p ?? 0,
    );

  it("answer GET /metrics on their own listener only; the service port answers 404", async () => {
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(server.service.port);
    const scraped = await scrape(metricsPort);
    expect(scraped.status).toBe(200);
    expect(scraped.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await h1(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
    for (const base of [server.baseUrl, `http://127.0.0.1:${server.service.port}`]) {
      const res = await h1(`${base}/metrics`);
      expect(res.status).toBe(404);
      expect(res.body).not.toContain("platform_rpc");
    }
  });

  it("count calls and their latency by service, method, protocol and code", async () => {
    const before = (await scrape(metricsPort)).samples;
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(PlatformActions, protocol, server.baseUrl);
      expect(await client.call("ListAvailableExecutionFunctions", {}, server.adminToken)).toMatchObject({ ok: true });
      expect(await client.call("GetTarget", { id: "nope" }, server.adminToken)).toMatchObject({ ok: false });
      expect(await client.call("GetTarget", { id: "nope" }, server.adminToken)).toMatchObject({ ok: false });
    }
    const after = (await scrape(metricsPort)).samples;
    for (const protocol of PROTOCOLS) {
      const ok = { service: SERVICE, method: "ListAvailableExecutionFunctions", protocol, code: "ok" };
      const missing = { service: SERVICE, method: "GetTarget", protocol, code: "not_found" };
      const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
      expect(delta("platform_rpc_requests_total", ok), `${protocol} ok`).toBe(1);
      expect(delta("platform_rpc_requests_total", missing), `${protocol} not_found`).toBe(2);
      expect(delta("platform_rpc_duration_seconds_count", missing)).toBe(2);
      expect(valueOf(after, "platform_rpc_duration_seconds_sum", missing)).toBeGreaterThan(0);
      // Cumulative buckets: the +Inf one holds every call.
      expect(valueOf(after, "platform_rpc_duration_seconds_bucket", { ...missing, le: "+Inf" })).toBe(
        valueOf(after, "platform_rpc_duration_seconds_count", missing),
      );
    }
  });

  it("report the database pool, the event store position and the projection lag", async () => {
    const { samples } = await scrape(metricsPort);
    const inUse = valueOf(samples, "platform_db_pool_connections", { state: "in_use" });
    const idle = valueOf(samples, "platform_db_pool_connections", { state: "idle" });
    expect(find(samples, "platform_db_pool_connections")).toHaveLength(2);
    expect(inUse + idle).toBeGreaterThanOrEqual(1);
    if (kind === "pglite") expect(inUse + idle).toBe(1);
    expect(find(samples, "platform_db_pool_waiting")).toHaveLength(1);
    expect(valueOf(samples, "platform_eventstore_up")).toBe(1);
    expect(valueOf(samples, "platform_eventstore_position")).toBe(await maxPosition());
    expect(valueOf(samples, "platform_projection_lag_seconds")).toBeLessThan(1);

    const created = await protocolClient(PlatformActions, "rest", server.baseUrl).call(
      "CreateTarget",
      { target: { name: `metrics-${kind}`, restWebhook: { url: "https://example.com/hook" } } },
      server.adminToken,
    );
    expect(created).toMatchObject({ ok: true });
    const position = valueOf((await scrape(metricsPort)).samples, "platform_eventstore_position");
    expect(position).toBeGreaterThan(valueOf(samples, "platform_eventstore_position"));
    expect(position).toBe(await maxPosition());
  });

  it.runIf(kind === "postgres")("measure projection lag as the age of the oldest open writing transaction", async () => {
    const client = new pg.Client({ connectionString: (server.config.database as { url: string }).url });
    await client.connect();
    try {
      await client.query("begin");
      await client.query("select pg_current_xact_id()"); // a writer from now on, as an append would make it
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const lag = valueOf((await scrape(metricsPort)).samples, "platform_projection_lag_seconds");
      expect(lag).toBeGreaterThanOrEqual(1.1);
      expect(lag).toBeLessThan(30);
      await client.query("rollback");
      expect(valueOf((await scrape(metricsPort)).samples, "platform_projection_lag_seconds")).toBeLessThan(1);
    } finally {
      await client.end();
    }
  });

  it("answer within the read timeout while the event store is locked, without its readings", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // PGlite has one connection: a transaction holding it starves every other reader.
    const holder =
      kind === "pglite"
        ? server.service.store.db.transaction().execute(async (tx) => {
            await sql`lock table events in access exclusive mode`.execute(tx);
            locked();
            await released;
          })
        : (async () => {
            const client = new pg.Client({ connectionString: (server.config.database as { url: string }).url });
            await client.connect();
            await client.query("begin");
            await client.query("lock table events in access exclusive mode");
            locked();
            await released;
            await client.query("rollback");
            await client.end();
          })();
    try {
      await isLocked;
      for (let i = 0; i < 2; i++) {
        const scraped = await scrape(metricsPort);
        expect(scraped.status).toBe(200);
        expect(scraped.ms).toBeLessThan(READ_TIMEOUT_MS + 1_500);
        expect(valueOf(scraped.samples, "platform_eventstore_up")).toBe(0);
        expect(find(scraped.samples, "platform_eventstore_position")).toHaveLength(0);
        // What needs no database still answers.
        expect(find(scraped.samples, "process_cpu_user_seconds_total")).toHaveLength(1);
      }
    } finally {
      release();
      await holder;
    }
    await expect.poll(async () => valueOf((await scrape(metricsPort)).samples, "platform_eventstore_up"), { timeout: 5_000 }).toBe(1);
    expect(valueOf((await scrape(metricsPort)).samples, "platform_eventstore_position")).toBe(await maxPosition());
  });

  it("count open connections, HTTP/2 sessions and streams", async () => {
    const ip = `http://127.0.0.1:${server.service.port}`;
    const watching = new AbortController();
    const health = createClient(Health, createGrpcTransport({ baseUrl: ip }));
    const stream = health.watch({ service: "" }, { signal: watching.signal })[Symbol.asyncIterator]();
    try {
      await stream.next(); // the first status: the stream is open on the server
      const { samples } = await scrape(metricsPort);
      expect(valueOf(samples, "platform_open_connections")).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, "platform_http2_sessions")).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, "platform_http2_streams")).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, "platform_health_watch_streams")).toBe(1);
    } finally {
      watching.abort();
      await stream.return?.();
    }
    await expect.poll(async () => valueOf((await scrape(metricsPort)).samples, "platform_http2_streams"), { timeout: 5_000 }).toBe(0);
    expect(valueOf((await scrape(metricsPort)).samples, "platform_health_watch_streams")).toBe(0);
    // A stream is counted when it ends; this one ended by its caller's cancel.
    const watch = { service: Health.typeName, method: "Watch", protocol: "grpc" };
    await expect.poll(async () => valueOf((await scrape(metricsPort)).samples, "platform_rpc_requests_total", { ...watch, code: "canceled" })).toBe(1);
    expect(valueOf((await scrape(metricsPort)).samples, "platform_rpc_requests_total", { ...watch, code: "ok" })).toBe(0);
  });

  it("include the Node.js process metrics", async () => {
    const { samples } = await scrape(metricsPort);
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds"]) {
      expect(find(samples, name), name).toHaveLength(1);
    }
  });
});
