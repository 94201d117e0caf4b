import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { listen, type Listener } from "../../src/server/listener.js";
import { spawnService, waitReady, type ChildService } from "../support/child-service.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h2 } from "./raw-http.js";
import {
  closedWithin,
  eventually,
  FLAG,
  FRAME,
  FrameReader,
  frame,
  headerBlock,
  openRaw,
  PREFACE,
  selfSignedCert,
  sleep,
  watch,
  watchRequest,
  type Target,
} from "./raw-connections.js";

const HEADERS_MS = 300;
const REQUEST_MS = 600;
const IDLE_MS = 400;
const LIMITS = {
  PLATFORM_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
  PLATFORM_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
  PLATFORM_HTTP_IDLE_TIMEOUT_MS: String(IDLE_MS),
  PLATFORM_MAX_CONNECTIONS: "50",
  PLATFORM_HTTP2_MAX_STREAMS: "4",
  PLATFORM_MAX_WATCH_STREAMS: "3",
};
/** A loaded machine makes timeouts late, never early; node's checks run every timeout/4. */
const LATE_MS = 3_000;
const EARLY_MS = 50;

function expectClosedAfter(elapsed: number, timeoutMs: number): void {
  expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - EARLY_MS);
  expect(elapsed).toBeLessThan(LATE_MS);
}

/**
 * A new connection's head (TLS handshake, first bytes, first request head or HTTP/2 preface
 * and SETTINGS) is due within the headers timeout of its accept. This limit is long enough to
 * tell a deadline from the accept, with a margin for a loaded machine, from the one restarted
 * at each stage that it replaced: a head that began just before the limit then had a whole
 * limit more.
 */
const HEAD_LIMIT_MS = 1_000;
/** How long before that limit such a client sends its first bytes (over TLS: its hello). */
const JUST_BEFORE_MS = 250;
const LATE_HEAD_MS = 400;

function expectClosedByHeadDeadline(elapsed: number): void {
  expect(elapsed).toBeGreaterThanOrEqual(HEAD_LIMIT_MS - EARLY_MS);
  expect(elapsed).toBeLessThan(HEAD_LIMIT_MS + LATE_HEAD_MS);
}

const GET_HEALTHZ = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

describe.each(["cleartext", "TLS"] as const)("slow and idle connections (%s)", (mode) => {
  let server: TestServer;
  let dir: string;
  let cert: ReturnType<typeof selfSignedCert> | undefined;
  let ca: Buffer | undefined;
  let origin: string;
  /** HTTP/1.1 and, with `h2`, HTTP/2 (TLS: by ALPN; cleartext: by the preface the test sends). */
  const target = (alpn: "http/1.1" | "h2" = "http/1.1"): Target => ({ port: server.service.port, ...(ca && { tls: { ca, alpn: [alpn] } }) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "platform-limits-"));
    cert = mode === "TLS" ? selfSignedCert(dir) : undefined;
    ca = cert?.ca;
    server = await startTestServer("pglite", {
      ...LIMITS,
      ...(cert && { PLATFORM_TLS_CERT_PATH: cert.certPath, PLATFORM_TLS_KEY_PATH: cert.keyPath, PLATFORM_EXTERNAL_URL: "https://localhost" }),
    });
    origin = `${cert ? "https" : "http"}://localhost:${server.service.port}`;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("closes connections with half a request line after the headers timeout, serving a normal client meanwhile", async () => {
    // Opened faster than they would fit under the cap of 50 if they were never closed.
    const [total, perTick] = mode === "TLS" ? [60, 3] : [200, 5];
    const halfOpen: { closedAfter: Promise<number>; received: () => string }[] = [];
    const normal: Promise<{ ms: number; response: string }>[] = [];
    for (let tick = 0; halfOpen.length < total; tick++) {
      for (let i = 0; i < perTick; i++) {
        const conn = await openRaw(target());
        conn.socket.write("GET /healthz HT");
        halfOpen.push({ closedAfter: closedWithin(conn.closed, conn.startedAt, LATE_MS + 1_000), received: conn.received });
      }
      normal.push(
        (async () => {
          const started = performance.now();
          const conn = await openRaw(target());
          conn.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
          await closedWithin(conn.closed, started, LATE_MS);
          return { ms: performance.now() - started, response: conn.received() };
        })(),
      );
      await sleep(100);
    }
    for (const { ms, response } of await Promise.all(normal)) {
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      expect(response).toMatch(/ok\n$/);
      expect(ms).toBeLessThan(1_000);
    }
    for (const conn of halfOpen) {
      expectClosedAfter(await conn.closedAfter, HEADERS_MS);
      expect(conn.received()).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it("closes a connection that sends nothing (not even a TLS hello) after the headers timeout", async () => {
    const conn = await openRaw({ port: server.service.port });
    expectClosedAfter(await closedWithin(conn.closed, conn.startedAt, LATE_MS), HEADERS_MS);
    expect(conn.received()).toBe("");
  });

  it("closes a connection that dribbles the HTTP/2 preface at the headers deadline", async () => {
    const conn = await openRaw(target("h2"));
    let sent = 0;
    const dribble = setInterval(() => conn.socket.write(PREFACE.subarray(sent, ++sent)), 100);
    try {
      // A byte every 100 ms would finish the preface after 2.4 s: only a deadline closes it sooner.
      expectClosedAfter(await closedWithin(conn.closed, conn.startedAt, LATE_MS), HEADERS_MS);
      expect(sent).toBeLessThan(PREFACE.length);
    } finally {
      clearInterval(dribble);
    }
  });

  it("closes an HTTP/2 connection whose preface comes without SETTINGS after the headers timeout", async () => {
    const conn = await openRaw(target("h2"));
    conn.socket.write(PREFACE);
    expectClosedAfter(await closedWithin(conn.closed, conn.startedAt, LATE_MS), HEADERS_MS);
  });

  it("answers 408 to an HTTP/1.1 request whose body does not arrive within the request timeout", async () => {
    const conn = await openRaw(target());
    conn.socket.write("POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{");
    const sentAt = performance.now();
    expectClosedAfter(await closedWithin(conn.closed, sentAt, LATE_MS), REQUEST_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("resets an HTTP/2 stream whose body does not arrive within the request timeout", async () => {
    const session = http2.connect(origin, { ca });
    session.on("error", () => {});
    try {
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/json" });
      stream.on("error", () => {});
      stream.write("{");
      const sentAt = performance.now();
      const closed = new Promise<number>((resolve) => stream.once("close", () => resolve(performance.now())));
      expectClosedAfter(await closedWithin(closed, sentAt, LATE_MS), REQUEST_MS);
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
  });

  it("closes an idle HTTP/1.1 keep-alive connection after the idle timeout", async () => {
    const conn = await openRaw(target());
    conn.socket.write(GET_HEALTHZ);
    expect(await eventually(() => conn.received().endsWith("ok\n"))).toBe(true);
    const answeredAt = performance.now();
    expectClosedAfter(await closedWithin(conn.closed, answeredAt, LATE_MS), IDLE_MS);
  });

  it("closes an idle HTTP/2 session with GOAWAY after the idle timeout", async () => {
    const session = http2.connect(origin, { ca });
    session.on("error", () => {});
    let goaway: number | undefined;
    session.on("goaway", (code) => (goaway = code));
    const closed = new Promise<number>((resolve) => session.once("close", () => resolve(performance.now())));
    expect((await h2(session, "/healthz")).status).toBe(200);
    const answeredAt = performance.now();
    expectClosedAfter(await closedWithin(closed, answeredAt, LATE_MS), IDLE_MS);
    expect(goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
  });

  describe("a new connection's head, due within the headers timeout of its accept", () => {
    let listener: Listener;
    const late = (alpn: "http/1.1" | "h2" = "http/1.1"): Target => ({ port: listener.port, ...(ca && { tls: { ca, alpn: [alpn] } }) });

    beforeAll(async () => {
      // Only the head is timed here: the request and idle timeouts are out of the way.
      const limits = { ...server.config.http, headersTimeoutMs: HEAD_LIMIT_MS, requestTimeoutMs: 60_000, idleTimeoutMs: 60_000 };
      listener = await listen(server.service.app.handle, {
        port: 0,
        host: "127.0.0.1",
        limits,
        ...(cert && { tls: { certPath: cert.certPath, keyPath: cert.keyPath } }),
      });
    });
    afterAll(() => listener?.close(0));

    it("closes an HTTP/1.1 connection whose first byte comes just before the headers timeout, then the rest of its head slowly", async () => {
      const conn = await openRaw(late(), { silentMs: HEAD_LIMIT_MS - JUST_BEFORE_MS });
      let sent = 0;
      const dribble = () => conn.socket.write(GET_HEALTHZ.slice(sent, ++sent));
      dribble();
      const timer = setInterval(dribble, 100);
      try {
        expectClosedByHeadDeadline(await closedWithin(conn.closed, conn.startedAt, LATE_MS));
        expect(sent).toBeLessThan(GET_HEALTHZ.length);
        // A 408 once the server has the socket; before (TLS: mid-handshake on a slow machine) a bare close.
        expect(conn.received()).toMatch(/^(HTTP\/1\.1 408 |$)/);
      } finally {
        clearInterval(timer);
      }
    });

    it("closes an HTTP/2 connection whose preface comes just before the headers timeout, without SETTINGS", async () => {
      const conn = await openRaw(late("h2"), { silentMs: HEAD_LIMIT_MS - JUST_BEFORE_MS });
      conn.socket.write(PREFACE);
      expectClosedByHeadDeadline(await closedWithin(conn.closed, conn.startedAt, LATE_MS));
    });

    it("keeps serving an HTTP/1.1 keep-alive connection past its first head's deadline", async () => {
      const conn = await openRaw(late());
      conn.socket.write(GET_HEALTHZ);
      expect(await eventually(() => conn.received().endsWith("ok\n"))).toBe(true);
      await sleep(conn.startedAt + HEAD_LIMIT_MS + 200 - performance.now());
      conn.socket.write(GET_HEALTHZ);
      expect(await eventually(() => conn.received().split("ok\n").length === 3)).toBe(true);
      expect(conn.received().match(/^HTTP\/1\.1 200 /gm)).toHaveLength(2);
      expect(conn.socket.destroyed).toBe(false);
      conn.socket.destroy();
    });

    it("answers 417 to an Expect it cannot meet and keeps that connection past its first head's deadline", async () => {
      const conn = await openRaw(late());
      conn.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: the-unexpected\r\n\r\n");
      expect(await eventually(() => /\r\n\r\n$/.test(conn.received()))).toBe(true);
      expect(conn.received()).toMatch(/^HTTP\/1\.1 417 /);
      await sleep(conn.startedAt + HEAD_LIMIT_MS + 200 - performance.now());
      conn.socket.write(GET_HEALTHZ);
      expect(await eventually(() => conn.received().endsWith("ok\n"))).toBe(true);
      expect(conn.received()).toMatch(/\r\n\r\nHTTP\/1\.1 200 /);
      conn.socket.destroy();
    });

    it("keeps an HTTP/2 session whose SETTINGS came in time open past its head's deadline", async () => {
      const session = http2.connect(`${ca ? "https" : "http"}://localhost:${listener.port}`, { ca });
      session.on("error", () => {});
      const startedAt = performance.now();
      try {
        expect((await h2(session, "/healthz")).status).toBe(200);
        await sleep(startedAt + HEAD_LIMIT_MS + 200 - performance.now());
        expect(session.closed || session.destroyed).toBe(false);
        expect((await h2(session, "/healthz")).status).toBe(200);
      } finally {
        session.destroy();
      }
    });
  });
});

describe("HTTP/2 streams, health watches and the connection cap", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer("pglite", LIMITS);
  });
  afterAll(() => server?.close());

  /** A second listener on the same app, with the timeouts long enough to hold connections. */
  async function holdingListener(maxConnections: number): Promise<Listener> {
    const long = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, idleTimeoutMs: 60_000 };
    return listen(server.service.app.handle, { port: 0, host: "127.0.0.1", limits: { ...server.config.http, ...long, maxConnections } });
  }

  it("counts open connections, HTTP/2 sessions and HTTP/2 streams", async () => {
    const listener = await holdingListener(100);
    const target = { port: listener.port };
    try {
      expect(listener.stats()).toEqual({ connections: 0, http2Sessions: 0, http2Streams: 0 });
      const silent = [await openRaw(target), await openRaw(target)];
      const keepAlive = await openRaw(target);
      keepAlive.socket.write(GET_HEALTHZ);
      const watching = http2.connect(`http://localhost:${listener.port}`);
      const idle = http2.connect(`http://localhost:${listener.port}`);
      for (const s of [watching, idle]) s.on("error", () => {});
      const watches = [await watch(watching), await watch(watching)];
      expect((await h2(idle, "/healthz")).status).toBe(200);
      const expected = { connections: 5, http2Sessions: 2, http2Streams: 2 };
      await eventually(() => JSON.stringify(listener.stats()) === JSON.stringify(expected));
      expect(listener.stats()).toEqual(expected);

      for (const w of watches) w.close();
      await eventually(() => listener.stats().http2Streams === 0);
      expect(listener.stats()).toEqual({ ...expected, http2Streams: 0 });
      for (const s of [watching, idle]) s.destroy();
      for (const c of [...silent, keepAlive]) c.socket.destroy();
      await eventually(() => listener.stats().connections === 0);
      expect(listener.stats()).toEqual({ connections: 0, http2Sessions: 0, http2Streams: 0 });
    } finally {
      await listener.close(0);
    }
  });

  it("closes connections over the cap at once and keeps serving the ones it holds", async () => {
    const listener = await holdingListener(8);
    const target = { port: listener.port };
    try {
      const held = await Promise.all(Array.from({ length: 8 }, () => openRaw(target)));
      expect(await eventually(() => listener.stats().connections === 8)).toBe(true);
      const over = await openRaw(target);
      expect(await closedWithin(over.closed, over.openedAt, 1_000)).toBeLessThan(1_000);
      expect(over.received()).toBe("");
      expect(listener.stats().connections).toBe(8);

      held[0]!.socket.write(GET_HEALTHZ);
      expect(await eventually(() => held[0]!.received().endsWith("ok\n"))).toBe(true);
      expect(held[0]!.received()).toMatch(/^HTTP\/1\.1 200 /);
      held[1]!.socket.destroy();
      expect(await eventually(() => listener.stats().connections === 7)).toBe(true);
      const next = await openRaw(target);
      next.socket.write(GET_HEALTHZ);
      expect(await eventually(() => next.received().endsWith("ok\n"))).toBe(true);
      for (const c of [...held, next]) c.socket.destroy();
    } finally {
      await listener.close(0);
    }
  });

  it("refuses HTTP/2 streams over the per-session limit with REFUSED_STREAM", async () => {
    const conn = await openRaw({ port: server.service.port });
    const frames = new FrameReader(conn.socket);
    // Six requests whose bodies never end, at once, without waiting for the server's SETTINGS.
    const requests = [1, 3, 5, 7, 9, 11].map((id) =>
      frame(
        FRAME.HEADERS,
        FLAG.END_HEADERS,
        id,
        headerBlock({
          ":method": "POST",
          ":scheme": "http",
          ":path": "/grpc.health.v1.Health/Check",
          ":authority": "localhost",
          "content-type": "application/json",
        }),
      ),
    );
    conn.socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), ...requests]));
    try {
      expect(await eventually(() => frames.resets.size >= 2)).toBe(true);
      await sleep(100);
      // The four admitted ones are still waiting for their bodies (the request timeout is 600 ms).
      expect([...frames.resets]).toEqual([
        [9, http2.constants.NGHTTP2_REFUSED_STREAM],
        [11, http2.constants.NGHTTP2_REFUSED_STREAM],
      ]);
    } finally {
      conn.socket.destroy();
    }
  });

  it("answers RESOURCE_EXHAUSTED to health watches over the process limit and reuses a freed slot", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    const counter = server.service.app.watchStreams;
    const open = async () => {
      const abort = new AbortController();
      const it = health.watch({ service: "" }, { signal: abort.signal })[Symbol.asyncIterator]();
      const first = await it.next();
      return { abort, first, it };
    };
    const watches = [await open(), await open(), await open()];
    for (const w of watches) expect(w.first.value?.status).toBe(Status.SERVING);
    expect(counter.open).toBe(3);

    const refused = await open().catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.ResourceExhausted);
    expect(Code.ResourceExhausted).toBe(8);

    watches[0]!.abort.abort();
    expect(await eventually(() => counter.open === 2)).toBe(true);
    const reused = await open();
    expect(reused.first.value?.status).toBe(Status.SERVING);
    for (const w of [...watches, reused]) w.abort.abort();
    expect(await eventually(() => counter.open === 0)).toBe(true);
  });

  // Last: it shuts the service down, which is what the watches then report.
  it("keeps health watches over HTTP/2 and HTTP/1.1 streaming past every timeout", async () => {
    const clients = [
      createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl })),
      createClient(Health, createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1" })),
    ];
    const seen: Status[][] = clients.map(() => []);
    const done = clients.map(async (client, i) => {
      for await (const update of client.watch({ service: "" })) seen[i]!.push(update.status);
    });
    expect(await eventually(() => seen.every((s) => s.length === 1))).toBe(true);
    await sleep(HEADERS_MS + REQUEST_MS + IDLE_MS + 500);
    expect(seen).toEqual([[Status.SERVING], [Status.SERVING]]);

    const closing = server.service.close();
    server.service.close = async () => {};
    await closing;
    await Promise.all(done);
    expect(seen).toEqual([
      [Status.SERVING, Status.NOT_SERVING],
      [Status.SERVING, Status.NOT_SERVING],
    ]);
  });
});

describe("memory under a flood of HTTP/2 health watches (the service as its own process)", () => {
  let service: ChildService;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "platform-limits-child-"));
    // The defaults: 100 streams per session, 1000 watches per process.
    service = await spawnService({ PLATFORM_DATA_DIR: dataDir });
    await waitReady(service);
  });
  afterAll(async () => {
    await service?.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Resident memory now and its high-water mark, in MiB. */
  const memory = () => {
    const status = readFileSync(`/proc/${service.process.pid}/status`, "utf8");
    const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
    return { rss: mb("VmRSS"), peak: mb("VmHWM") };
  };

  it("stays bounded and serving while 20 sessions each ask for 1000 watches", async () => {
    // Start-up (migrations, the embedded database) peaks above where the service settles:
    // the high-water mark starts again from now (proc(5), clear_refs "5").
    writeFileSync(`/proc/${service.process.pid}/clear_refs`, "5");
    const before = memory().rss;
    const authority = `localhost:${service.port}`;
    const sessions = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const conn = await openRaw({ port: service.port });
        const frames = new FrameReader(conn.socket);
        const requests = Array.from({ length: 1000 }, (_, i) => watchRequest(1 + 2 * i, authority));
        conn.socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), ...requests]));
        return { conn, frames };
      }),
    );
    try {
      const settled = await eventually(() => sessions.every((s) => s.frames.answered() === 1000 || s.conn.socket.destroyed), 30_000);
      expect(settled).toBe(true);
      await sleep(1_000);
      expect(service.process.exitCode).toBeNull();
      // The peak, not a sample: the flood must not have spiked memory at any point either.
      expect(memory().peak - before).toBeLessThan(300);

      const refused = sessions.reduce((n, s) => n + [...s.frames.resets.values()].filter((c) => c === http2.constants.NGHTTP2_REFUSED_STREAM).length, 0);
      expect(refused).toBeGreaterThanOrEqual(20 * 900);
      const started = performance.now();
      expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2_000);
      // 20 × 100 admitted streams, but only 1000 watches: the next one is refused.
      const health = createClient(Health, createGrpcTransport({ baseUrl: service.baseUrl }));
      const error = await (async () => {
        for await (const _ of health.watch({ service: "" })) break;
      })().catch((e: unknown) => ConnectError.from(e));
      expect((error as ConnectError | undefined)?.code).toBe(Code.ResourceExhausted);
    } finally {
      for (const s of sessions) s.conn.socket.destroy();
    }
  });
});
