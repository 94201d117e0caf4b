import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { h1, type RawResponse } from "../server/raw-http.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { startTestServer, type TestServer } from "../support/server.js";

const search = (server: TestServer) =>
  h1(`${server.baseUrl}/resources/v3alpha/targets/_search`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    body: "[]",
  });

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

/** A gRPC SearchTargets with a client deadline; resolves to the code it ended with. */
async function searchWithDeadline(server: TestServer, timeoutMs: number): Promise<Code | "ok"> {
  const client = createClient(PlatformActions, createGrpcTransport({ baseUrl: server.baseUrl }));
  try {
    await client.searchTargets({}, { timeoutMs, headers: { authorization: `Bearer ${server.adminToken}` } });
    return "ok";
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

const postgresOnly = describe.skipIf(!process.env.TEST_DATABASE_URL);

postgresOnly("a stalled PostgreSQL gets bounded waits and the right codes", () => {
  /** Statement timeout 600 ms. */
  let quick: TestServer;
  /** Statement timeout 10 s: whatever ends a wait sooner is not the statement timeout. */
  let patient: TestServer;
  /** Holds the locks. */
  let admin: pg.Client;
  /** Watches, outside the locker's transaction: pg_stat_activity is a snapshot per transaction. */
  let observer: pg.Client;

  beforeAll(async () => {
    quick = await startTestServer("postgres", { PLATFORM_DB_STATEMENT_TIMEOUT_MS: "600", PLATFORM_HEALTH_TIMEOUT_MS: "500" });
    patient = await startTestServer("postgres", {
      PLATFORM_DB_STATEMENT_TIMEOUT_MS: "10000",
      PLATFORM_HEALTH_TIMEOUT_MS: "500",
      PLATFORM_DB_POOL_MAX: "3",
      // Two of the three connections shared, one statement in flight on each: a third
      // statement takes the pool's last connection and a fourth waits for one.
      PLATFORM_DB_SHARED_CONNECTIONS: "2",
      PLATFORM_DB_SHARED_QUEUE_MAX: "1",
    });
  });
  afterEach(async () => {
    await admin?.query("rollback").catch(() => {});
    await admin?.end();
    await observer?.end();
  });
  afterAll(async () => {
    await quick?.close();
    await patient?.close();
  });

  /** Locks the targets table of the server's database from another session. */
  const lockTargets = async (server: TestServer) => {
    const url = (server.config.database as { url: string }).url;
    admin = new pg.Client({ connectionString: url });
    observer = new pg.Client({ connectionString: url });
    await Promise.all([admin.connect(), observer.connect()]);
    await admin.query("begin");
    await admin.query("lock table targets in access exclusive mode");
  };
  /** The service's backends waiting on a lock right now. */
  const waiting = async () =>
    (
      await observer.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'",
      )
    ).rows[0].n as number;

  it("a table locked by another session gives 504 after the statement timeout, and /ready stays ready", async () => {
    await lockTargets(quick);
    const { value, ms } = await timed(() => search(quick));
    expect(value.status).toBe(504);
    expect(JSON.parse(value.body)).toMatchObject({ code: Code.DeadlineExceeded });
    expect(ms).toBeGreaterThanOrEqual(550);
    expect(ms).toBeLessThan(3_000);
    // A lock on one table is not an unreachable database.
    expect((await h1(`${quick.baseUrl}/ready`)).status).toBe(200);
    await admin.query("rollback");
    expect((await search(quick)).status).toBe(200);
  });

  it("the request's own deadline ends its database work, and the server stops waiting on the lock", async () => {
    await lockTargets(patient);
    const pending = timed(() => searchWithDeadline(patient, 300));
    await expect.poll(waiting, { timeout: 1_000, interval: 20 }).toBe(1);
    const { value, ms } = await pending;
    expect(value).toBe(Code.DeadlineExceeded);
    expect(ms).toBeLessThan(1_000);
    // Cancelled on the server, not left waiting for its 10 s statement timeout.
    await expect.poll(waiting, { timeout: 1_000, interval: 20 }).toBe(0);
    await admin.query("rollback");
    expect((await search(patient)).status).toBe(200);
  });

  it("/ready answers not ready within the health timeout when every connection is stuck, and recovers", async () => {
    await lockTargets(patient);
    // More requests than there are connections, shared or pooled: the probe finds none free.
    const stuck = Array.from({ length: 4 }, () => search(patient));
    await expect.poll(waiting, { timeout: 2_000, interval: 20 }).toBe(3);
    const { value, ms } = await timed(() => h1(`${patient.baseUrl}/ready`));
    expect(value.status).toBe(503);
    expect(ms).toBeLessThan(1_500);
    await admin.query("rollback");
    for (const res of await Promise.all(stuck)) expect(res.status).toBe(200);
    await expect.poll(async () => (await h1(`${patient.baseUrl}/ready`)).status, { timeout: 3_000, interval: 100 }).toBe(200);
  });

  it("a backend terminated mid-query fails that request with 503 and the process serves on", async () => {
    await lockTargets(patient);
    const pending = search(patient);
    await expect.poll(waiting, { timeout: 2_000, interval: 20 }).toBe(1);
    await observer.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid not in (pg_backend_pid(), $1)", [
      (admin as unknown as { processID: number }).processID,
    ]);
    const res = await pending;
    expect(res.status).toBe(503);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    await admin.query("rollback");
    let after: RawResponse = await search(patient);
    // The pool may hand out one more connection that died with the others before it notices.
    if (after.status === 503) after = await search(patient);
    expect(after.status).toBe(200);
  });
});

postgresOnly("an unreachable PostgreSQL answers 503 in bounded time", () => {
  let server: TestServer;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const direct = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    server = await startTestServer(
      "postgres",
      { PLATFORM_DB_CONNECT_TIMEOUT_MS: "400", PLATFORM_DB_STATEMENT_TIMEOUT_MS: "400", PLATFORM_HEALTH_TIMEOUT_MS: "400" },
      {
        databaseUrl: (url) => {
          url.hostname = "127.0.0.1";
          url.port = String(proxy.port);
          return url;
        },
      },
    );
  });
  afterEach(() => {
    proxy.mode = "pass";
  });
  afterAll(async () => {
    proxy.mode = "pass";
    await server?.close();
    await proxy?.close();
  });

  it.each(["refuse", "swallow"] as const)("when the database %ss connections: 503 with Retry-After, /ready 503, then recovery", async (mode) => {
    expect((await search(server)).status).toBe(200);
    proxy.mode = mode;
    proxy.cut();
    const { value, ms } = await timed(() => search(server));
    expect(value.status).toBe(503);
    expect(JSON.parse(value.body)).toMatchObject({ code: Code.Unavailable });
    expect(value.headers["retry-after"]).toBeDefined();
    expect(ms).toBeLessThan(2_000);
    const ready = await timed(() => h1(`${server.baseUrl}/ready`));
    expect(ready.value.status).toBe(503);
    expect(ready.ms).toBeLessThan(1_500);

    proxy.mode = "pass";
    await expect.poll(async () => (await search(server)).status, { timeout: 5_000, interval: 100 }).toBe(200);
  });

  it("a network that swallows answers on open connections fails the query after the read timeout", async () => {
    expect((await search(server)).status).toBe(200);
    proxy.mode = "swallow";
    const { value, ms } = await timed(() => search(server));
    expect(value.status).toBe(503);
    // statement timeout + the client's margin, not forever.
    expect(ms).toBeLessThan(5_000);
    proxy.mode = "pass";
    await expect.poll(async () => (await search(server)).status, { timeout: 5_000, interval: 100 }).toBe(200);
  });

  it("cutting connections mid-request gives 503 and no crash", async () => {
    proxy.mode = "swallow";
    const pending = search(server);
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.cut();
    proxy.mode = "pass";
    expect((await pending).status).toBe(503);
    await expect.poll(async () => (await search(server)).status, { timeout: 5_000, interval: 100 }).toBe(200);
  });
});

describe("a busy embedded database (pglite) gets bounded waits too", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite", { PLATFORM_DB_STATEMENT_TIMEOUT_MS: "400", PLATFORM_HEALTH_TIMEOUT_MS: "300" });
  });
  afterAll(() => server?.close());

  /** Holds PGlite's one connection in a transaction until the returned function is called. */
  async function hold(): Promise<() => Promise<void>> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inside = new Promise<void>((resolve) => (started = resolve));
    const tx = server.service.store.db.transaction().execute(async () => {
      started();
      await held;
    });
    await inside;
    return async () => {
      release();
      await tx;
    };
  }

  it("a request that cannot get the connection within the statement timeout gets 504; /ready says not ready in time", async () => {
    const release = await hold();
    try {
      const { value, ms } = await timed(() => search(server));
      expect(value.status).toBe(504);
      expect(ms).toBeLessThan(2_000);
      const ready = await timed(() => h1(`${server.baseUrl}/ready`));
      expect(ready.value.status).toBe(503);
      expect(ready.ms).toBeLessThan(1_500);
    } finally {
      await release();
    }
    expect((await search(server)).status).toBe(200);
    // The probe's answer is cached for a second.
    await expect.poll(async () => (await h1(`${server.baseUrl}/ready`)).status, { timeout: 3_000, interval: 100 }).toBe(200);
  });

  it("the gRPC health check says NOT_SERVING within the health timeout, and SERVING again after", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    const release = await hold();
    try {
      // The probe's last answer is cached for a second; every check still answers promptly.
      await expect
        .poll(
          async () => {
            const { value, ms } = await timed(() => health.check({ service: "" }));
            expect(ms).toBeLessThan(1_500);
            return value.status;
          },
          { timeout: 3_000, interval: 100 },
        )
        .toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    } finally {
      await release();
    }
    await expect
      .poll(async () => (await health.check({ service: "" })).status, { timeout: 3_000, interval: 100 })
      .toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("the request's deadline ends the wait sooner", async () => {
    const release = await hold();
    try {
      const { value, ms } = await timed(() => searchWithDeadline(server, 150));
      expect(value).toBe(Code.DeadlineExceeded);
      expect(ms).toBeLessThan(380);
    } finally {
      await release();
    }
    expect(await searchWithDeadline(server, 5_000)).toBe("ok");
  });
});
