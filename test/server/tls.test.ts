import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h2, type RawResponse } from "./raw-http.js";

/** A request over TLS with the given ALPN offer; reports the protocol the server chose. */
function httpsGet(url: string, ca: Buffer, opts: { ALPNProtocols?: string[]; headers?: Record<string, string> } = {}) {
  return new Promise<RawResponse & { alpn: string | false | null }>((resolve, reject) => {
    const req = https.request(url, { ca, agent: false, headers: opts.headers, ...(opts.ALPNProtocols && { ALPNProtocols: opts.ALPNProtocols }) }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, alpn: (res.socket as tls.TLSSocket).alpnProtocol }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("TLS with ALPN on the one port", () => {
  let dir: string;
  let ca: Buffer;
  let server: TestServer;
  let origin: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "platform-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    ca = readFileSync(join(dir, "cert.pem"));
    server = await startTestServer("pglite", {
      PLATFORM_TLS_CERT_PATH: join(dir, "cert.pem"),
      PLATFORM_TLS_KEY_PATH: join(dir, "key.pem"),
      PLATFORM_EXTERNAL_URL: "https://localhost",
    });
    origin = `https://localhost:${server.service.port}`;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("negotiates h2 and serves HTTP/2", async () => {
    const session = http2.connect(origin, { ca });
    try {
      await new Promise<void>((resolve, reject) => session.once("connect", () => resolve()).once("error", reject));
      expect(session.alpnProtocol).toBe("h2");
      expect(await h2(session, "/healthz")).toMatchObject({ status: 200, body: "ok\n" });
      const rest = await h2(session, "/resources/v3alpha/targets/nope", { headers: { authorization: `Bearer ${server.adminToken}` } });
      expect(rest.status).toBe(404);
    } finally {
      session.close();
    }
  });

  it("negotiates http/1.1 and serves HTTP/1.1", async () => {
    const res = await httpsGet(`${origin}/healthz`, ca, { ALPNProtocols: ["http/1.1"] });
    expect(res).toMatchObject({ status: 200, body: "ok\n", alpn: "http/1.1" });
    const rest = await httpsGet(`${origin}/resources/v3alpha/targets/nope`, ca, {
      ALPNProtocols: ["http/1.1"],
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(rest.status).toBe(404);
    expect(JSON.parse(rest.body)).toMatchObject({ code: Code.NotFound });
  });

  it("serves HTTP/1.1 to a client that offers no ALPN", async () => {
    expect(await httpsGet(`${origin}/healthz`, ca)).toMatchObject({ status: 200, body: "ok\n" });
  });

  it("serves gRPC over TLS", async () => {
    const transport = createGrpcTransport({ baseUrl: origin, nodeOptions: { ca } });
    expect((await createClient(Health, transport).check({ service: "" })).status).toBe(Status.SERVING);
    const actions = createClient(PlatformActions, transport);
    const headers = { authorization: `Bearer ${server.adminToken}` };
    const functions = await actions.listAvailableExecutionFunctions({}, { headers });
    expect(functions.functions.length).toBeGreaterThan(0);
    const error = await actions.getTarget({ id: "nope" }, { headers }).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.NotFound);
  });

  it("serves Connect over TLS on HTTP/1.1", async () => {
    const transport = createConnectTransport({ baseUrl: origin, httpVersion: "1.1", nodeOptions: { ca } });
    const res = await createClient(PlatformActions, transport).listAvailableExecutionFunctions(
      {},
      { headers: { authorization: `Bearer ${server.adminToken}` } },
    );
    expect(res.functions.length).toBeGreaterThan(0);
  });

  it("speaks only TLS: a cleartext HTTP/1.1 request gets no HTTP answer", async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(server.service.port, "127.0.0.1");
      let data = "";
      socket.on("data", (c: Buffer) => (data += c.toString("latin1")));
      socket.on("close", () => resolve(data));
      socket.on("error", () => resolve(data));
      socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
      setTimeout(() => socket.destroy(), 2_000);
    });
    expect(answer).not.toMatch(/^HTTP\/1\.1 200/);
  });

  // Last: it shuts the service down.
  it("shuts down quickly with idle keep-alive HTTP/1.1 and HTTP/2 clients over TLS", async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
    const keepAlive = await new Promise<number>((resolve, reject) =>
      https.get(`${origin}/healthz`, { agent }, (res) => res.resume().on("end", () => resolve(res.statusCode!))).on("error", reject),
    );
    expect(keepAlive).toBe(200);
    const idleSocket = Object.values(agent.freeSockets).flat()[0];
    expect(idleSocket).toBeDefined();
    const session = http2.connect(origin, { ca });
    session.on("error", () => {});
    expect((await h2(session, "/healthz")).status).toBe(200);

    const started = performance.now();
    const closing = server.service.close();
    server.service.close = async () => {};
    await closing;
    // The grace period is 10 s: only closing idle connections right away is this fast.
    expect(performance.now() - started).toBeLessThan(2_000);
    agent.destroy();
    session.destroy();
  });
});
