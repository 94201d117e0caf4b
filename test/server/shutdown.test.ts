import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h1, h2, type RawResponse } from "./raw-http.js";

/** The error code of a fresh TCP connection to the port, or "connected". */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}

const closed = (emitter: NodeJS.EventEmitter & { destroyed?: boolean }) =>
  emitter.destroyed ? Promise.resolve() : new Promise<void>((resolve) => emitter.once("close", () => resolve()));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A started request whose body is "[" so far; finish() sends "]". */
interface Pending {
  finish(): void;
  response: Promise<RawResponse>;
}

function h1InFlight(url: string, headers: Record<string, string>): Pending {
  const req = http.request(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" }, agent: false });
  const response = new Promise<RawResponse>((resolve, reject) => {
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
  });
  req.flushHeaders();
  req.write("[");
  return { finish: () => req.end("]"), response };
}

function h2InFlight(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>): Pending {
  const stream = session.request({ ":method": "POST", ":path": path, ...headers });
  const response = new Promise<RawResponse>((resolve, reject) => {
    let status = 0;
    let body = "";
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.on("data", (c: Buffer) => (body += c));
    stream.on("end", () => resolve({ status, headers: {}, body }));
    stream.on("error", reject);
  });
  stream.write("[");
  return { finish: () => stream.end("]"), response };
}

describe.each(DATABASE_KINDS)("graceful shutdown (%s)", (kind) => {
  let server: TestServer;
  /** Closes the service once; server.close() in afterAll then only drops the database. */
  function closeService(): Promise<void> {
    const closing = server.service.close();
    server.service.close = async () => {};
    return closing;
  }

  describe("with idle clients connected", () => {
    beforeAll(async () => {
      server = await startTestServer(kind);
    });
    afterAll(() => server?.close());

    it("closes idle HTTP/1.1 keep-alive and HTTP/2 connections at once, then refuses new connections", async () => {
      const port = server.service.port;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      expect((await h1(`${server.baseUrl}/healthz`, { agent })).status).toBe(200);
      const idleSocket = Object.values(agent.freeSockets).flat()[0];
      expect(idleSocket).toBeDefined();

      const session = http2.connect(server.baseUrl);
      session.on("error", () => {});
      expect((await h2(session, "/healthz")).status).toBe(200);
      const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
      expect((await health.check({ service: "" })).status).toBe(Status.SERVING);

      const started = performance.now();
      await closeService();
      // The grace period is 10 s: only closing idle connections right away is this fast.
      expect(performance.now() - started).toBeLessThan(2_000);
      await Promise.all([closed(idleSocket!), closed(session)]);
      expect(await connectOutcome(port)).toBe("ECONNREFUSED");
      agent.destroy();
    });
  });

  describe("with a health watch open", () => {
    beforeAll(async () => {
      server = await startTestServer(kind);
    });
    afterAll(() => server?.close());

    it("reports NOT_SERVING to the watcher and ends the stream instead of holding the drain", async () => {
      const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
      const seen: Status[] = [];
      const stream = health.watch({ service: "" });
      const watching = (async () => {
        for await (const update of stream) seen.push(update.status);
      })();
      while (seen.length === 0) await sleep(20);
      expect(seen).toEqual([Status.SERVING]);

      const started = performance.now();
      await closeService();
      expect(performance.now() - started).toBeLessThan(2_000);
      await watching;
      expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    });
  });

  describe("with requests in flight", () => {
    beforeAll(async () => {
      server = await startTestServer(kind);
    });
    afterAll(() => server?.close());

    it("stops accepting at once but lets in-flight HTTP/1.1 and HTTP/2 requests finish", async () => {
      const port = server.service.port;
      const path = "/resources/v3alpha/targets/_search";
      const headers = { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" };
      const session = http2.connect(server.baseUrl);
      session.on("error", () => {});
      const pending = [h1InFlight(`${server.baseUrl}${path}`, headers), h2InFlight(session, path, headers)];
      await sleep(300); // the server has the headers and waits for the bodies

      const started = performance.now();
      const closing = closeService();
      await sleep(100);
      expect(await connectOutcome(port)).toBe("ECONNREFUSED");

      for (const p of pending) p.finish();
      for (const res of await Promise.all(pending.map((p) => p.response))) {
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toHaveProperty("details");
      }
      await closing;
      expect(performance.now() - started).toBeLessThan(3_000);
      session.destroy();
    });
  });
});

/**
 * The cluster primary (PLATFORM_WORKERS=2) when its workers keep dying (no database to reach):
 * a SIGTERM while their restarts are pending still ends it, and starts no other worker.
 */
describe("a cluster whose workers keep dying", () => {
  it("stops on SIGTERM while no worker is alive, and restarts none after it", async () => {
    const { freePort, spawnService } = await import("../support/child-service.js");
    const unreachable = await freePort();
    const service = await spawnService({
      PLATFORM_WORKERS: "2",
      DATABASE_URL: `postgres://postgres@127.0.0.1:${unreachable}/none`,
      PLATFORM_MASTERKEY: "0123456789abcdef0123456789abcdef",
      PLATFORM_DATA_DIR: "/nonexistent-cluster-test",
      LOG_LEVEL: "info",
    });
    try {
      const deaths = () => (service.output().match(/worker died; starting another/g) ?? []).length;
      // Both workers have died: for the next second (the restart delay) none is alive.
      for (let waited = 0; deaths() < 2; waited += 20) {
        if (waited > 20_000) throw new Error(`the workers did not die:\n${service.output()}`);
        await sleep(20);
      }
      const started = Date.now();
      service.process.kill("SIGTERM");
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - started).toBeLessThan(5_000);
      // No worker was started after the SIGTERM (each one that starts fails, saying so).
      expect((service.output().match(/"level":"fatal"/g) ?? []).length).toBe(2);
      expect(deaths()).toBe(2);
    } finally {
      await service.stop("SIGKILL");
    }
  }, 60_000);
});
