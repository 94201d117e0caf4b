import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

const SERVICE = PlatformActions.typeName;
const SERVER = 2;
const CLIENT = 3;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
  resource: Record<string, string | number | undefined>;
}

/** An OTLP/HTTP collector on 127.0.0.1 that keeps what it is sent (JSON: OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      paths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
      const payload = JSON.parse(body) as { resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of payload.resourceSpans) {
        const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, valueOf(a.value)]));
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, resource });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { spans, paths, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

function valueOf(value: OtlpValue): string | number | undefined {
  return value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue));
}
const attr = (span: OtlpSpan, key: string) => {
  const found = span.attributes.find((a) => a.key === key);
  return found && valueOf(found.value);
};

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

describe("tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("starts no tracing and registers nothing with OpenTelemetry", async () => {
    expect(process.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    const server = await startTestServer("pglite");
    try {
      expect(server.service.telemetry.tracing).toBeUndefined();
      // The API keeps its registrations on a global symbol; no SDK was set up in this process.
      expect((globalThis as Record<symbol, unknown>)[Symbol.for("opentelemetry.js.api.1")]).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe.each(DATABASE_KINDS)("OpenTelemetry traces over OTLP/HTTP (%s)", (kind) => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let server: TestServer;
  const saved = { ...process.env };
  beforeAll(async () => {
    collector = await startCollector();
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "identity-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.close();
    await collector?.close();
    for (const key of Object.keys(process.env)) if (key.startsWith("OTEL_") && !(key in saved)) delete process.env[key];
  });

  /** The trace's spans once its server span has arrived: it ends last, so it may come in a later batch. */
  const spansOf = async (traceId: string) => {
    await expect.poll(() => collector.spans.some((s) => s.traceId === traceId && s.kind === SERVER), { timeout: 10_000 }).toBe(true);
    return collector.spans.filter((s) => s.traceId === traceId);
  };

  it.each([
    ["Connect", "connect"],
    ["REST", "rest"],
  ] as const)("a %s call with a traceparent: a child RPC span with method and code, and DB spans under it", async (_, protocol) => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const headers = { authorization: `Bearer ${server.adminToken}`, traceparent: `00-${traceId}-${callerSpan}-01` };
    const res =
      protocol === "rest"
        ? await fetch(`${server.baseUrl}/resources/v3alpha/targets/nope`, { headers })
        : await fetch(`${server.baseUrl}/${SERVICE}/GetTarget`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify({ id: "nope" }),
          });
    expect(res.status).toBe(404);

    const spans = await spansOf(traceId);
    const rpc = spans.find((s) => s.kind === SERVER)!;
    expect(rpc).toMatchObject({ name: `${SERVICE}/GetTarget`, parentSpanId: callerSpan });
    expect(attr(rpc, "rpc.system")).toBe("connect_rpc");
    expect(attr(rpc, "rpc.service")).toBe(SERVICE);
    expect(attr(rpc, "rpc.method")).toBe("GetTarget");
    expect(attr(rpc, "rpc.grpc.status_code")).toBe(5);
    expect(attr(rpc, "rpc.connect_rpc.error_code")).toBe("not_found");
    expect(attr(rpc, "platform.rpc.protocol")).toBe(protocol);
    expect(String(attr(rpc, "platform.request_id"))).toMatch(/^[0-9a-f-]{36}$/);
    expect(rpc.resource["service.name"]).toBe("identity-under-test");

    const db = spans.filter((s) => s.kind === CLIENT);
    expect(db.length).toBeGreaterThanOrEqual(1);
    for (const span of db) {
      expect(span.parentSpanId).toBe(rpc.spanId);
      expect(attr(span, "db.system.name")).toBe("postgresql");
    }
    expect(db.map((s) => String(attr(s, "db.query.text")))).toContainEqual(expect.stringMatching(/from "targets"/));
  });

  it("a gRPC call without a traceparent starts a trace of its own, code 0 when ok", async () => {
    const before = new Set(collector.spans.map((s) => s.spanId));
    const client = createClient(PlatformActions, createGrpcTransport({ baseUrl: server.baseUrl }));
    await client.listAvailableExecutionFunctions({}, { headers: { authorization: `Bearer ${server.adminToken}` } });
    await expect
      .poll(() => collector.spans.find((s) => !before.has(s.spanId) && s.name === `${SERVICE}/ListAvailableExecutionFunctions`), { timeout: 10_000 })
      .toBeDefined();
    const rpc = collector.spans.find((s) => !before.has(s.spanId) && s.name === `${SERVICE}/ListAvailableExecutionFunctions`)!;
    expect(rpc.parentSpanId ?? "").toBe("");
    expect(attr(rpc, "rpc.system")).toBe("grpc");
    expect(attr(rpc, "rpc.grpc.status_code")).toBe(0);
    expect(rpc.status?.code ?? 0).not.toBe(2); // not ERROR
    expect(collector.paths.every((p) => p.startsWith("POST /v1/traces application/json"))).toBe(true);
  });
});
