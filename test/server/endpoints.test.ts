import { create, createFileRegistry, fromBinary, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1, ServerReflectionRequestSchema, type ServerReflectionResponse } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PROTOCOLS, protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h1, headerList } from "./raw-http.js";

const ACTIONS = PlatformActions.typeName;
const GET_TARGET = `/${ACTIONS}/GetTarget`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Orders descriptors so that each comes after its imports; throws when one is missing. */
function importsFirst(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const sorted = new Map<string, FileDescriptorProto>();
  const add = (name: string, importer: string) => {
    const file = byName.get(name);
    if (!file) throw new Error(`reflection did not send ${name}, imported by ${importer}`);
    if (sorted.has(name)) return;
    file.dependency.forEach((dep) => add(dep, name));
    sorted.set(name, file);
  };
  files.forEach((f) => add(f.name, "the request"));
  return [...sorted.values()];
}

describe.each(DATABASE_KINDS)("endpoints on the one port (%s)", (kind) => {
  let server: TestServer;
  /** The loopback address by number: not an instance domain itself, an alias of localhost. */
  let ip: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    ip = `http://127.0.0.1:${server.service.port}`;
  });
  afterAll(() => server?.close());

  describe("plain HTTP", () => {
    it("GET /healthz answers 200", async () => {
      expect(await h1(`${server.baseUrl}/healthz`)).toMatchObject({ status: 200, body: "ok\n" });
      expect((await h1(`${ip}/healthz`)).status).toBe(200);
    });

    it("GET /ready answers 200 with the database migrated", async () => {
      expect((await h1(`${server.baseUrl}/ready`)).status).toBe(200);
      expect((await h1(`${ip}/ready`)).status).toBe(200);
    });

    it("GET /openapi.json is an OpenAPI 3.1 document with the targets paths", async () => {
      const res = await h1(`${ip}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      const doc = JSON.parse(res.body) as { openapi: string; paths: Record<string, Record<string, unknown>> };
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.paths["/resources/v3alpha/targets"]).toHaveProperty("post");
      expect(doc.paths["/resources/v3alpha/targets/{id}"]).toHaveProperty("get");
      expect(doc.paths["/resources/v3alpha/targets/_search"]).toHaveProperty("post");
    });

    it("answers an unknown path with a 404 rpcStatus", async () => {
      const res = await h1(`${server.baseUrl}/no/such/endpoint`);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ code: Code.NotFound });
    });

    it("answers a malformed percent-encoding in a REST path as a client error, not 500", async () => {
      const res = await h1(`${server.baseUrl}/resources/v3alpha/targets/%E0%A4%A`, {
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    });
  });

  describe("grpc.health.v1.Health over gRPC, without a token, on a host with no instance", () => {
    const health = () => createClient(Health, createGrpcTransport({ baseUrl: ip }));

    it.each(["", ACTIONS, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"])("Check(%j) is SERVING", async (service) => {
      expect((await health().check({ service })).status).toBe(Status.SERVING);
    });

    it("Check of an unknown service is NotFound", async () => {
      const error = await health()
        .check({ service: "nope" })
        .catch((e: unknown) => ConnectError.from(e));
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.NotFound);
    });
  });

  describe.each([
    ["v1", ReflectionV1],
    ["v1alpha", ReflectionV1alpha],
  ] as const)("gRPC server reflection %s over HTTP/2, without a token, on a host with no instance", (_, service) => {
    /** One bidi stream: sends every request, collects every response. */
    async function reflect(...requests: Parameters<typeof create<typeof ServerReflectionRequestSchema>>[1][]) {
      const client = createClient(service as DescService as typeof ReflectionV1, createGrpcTransport({ baseUrl: ip }));
      async function* input() {
        for (const r of requests) yield create(ServerReflectionRequestSchema, r);
      }
      const out: ServerReflectionResponse[] = [];
      for await (const res of client.serverReflectionInfo(input())) out.push(res);
      return out;
    }

    it("lists our services, Health and both reflection services", async () => {
      const [res] = await reflect({ messageRequest: { case: "listServices", value: "*" } });
      expect(res?.messageResponse.case).toBe("listServicesResponse");
      const names = (res!.messageResponse.value as { service: { name: string }[] }).service.map((s) => s.name);
      expect(names).toEqual(
        expect.arrayContaining([ACTIONS, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]),
      );
    });

    it("answers file_containing_symbol with descriptors that decode and resolve", async () => {
      const [res, missing] = await reflect(
        { messageRequest: { case: "fileContainingSymbol", value: ACTIONS } },
        { messageRequest: { case: "fileContainingSymbol", value: "no.such.Symbol" } },
      );
      expect(res?.messageResponse.case).toBe("fileDescriptorResponse");
      const bytes = (res!.messageResponse.value as { fileDescriptorProto: Uint8Array[] }).fileDescriptorProto;
      const files = bytes.map((b) => fromBinary(FileDescriptorProtoSchema, b));
      expect(files[0]!.name).toBe("platform/resources/action/v3alpha/action_service.proto");
      // What grpcurl does: build a registry from the answer alone; every import must be in it.
      const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: importsFirst(files) }));
      const methods = registry.getService(ACTIONS)?.methods.map((m) => m.name);
      expect(methods).toEqual(PlatformActions.methods.map((m) => m.name));

      expect(missing?.messageResponse.case).toBe("errorResponse");
      expect(missing!.messageResponse.value).toMatchObject({ errorCode: Code.NotFound });
    });
  });

  describe("tenancy by host name", () => {
    it.each(PROTOCOLS)("127.0.0.1 reaches the first instance (served as localhost) over %s", async (protocol) => {
      const created = await protocolClient(PlatformActions, "rest", server.baseUrl).call(
        "CreateTarget",
        { target: { name: `via-ip-${protocol}`, restWebhook: { url: "https://example.com" } } },
        server.adminToken,
      );
      const id = created.ok ? String((created.message.details as { id: string }).id) : "";
      const result = await protocolClient(PlatformActions, protocol, ip).call("GetTarget", { id }, server.adminToken);
      expect(result).toMatchObject({ ok: true, message: { target: { target: { name: `via-ip-${protocol}` } } } });
    });
  });

  describe("CORS with the default (any origin)", () => {
    const origin = "https://app.example";

    it("answers a preflight with 204 and the allowed methods and headers", async () => {
      const res = await h1(`${server.baseUrl}${GET_TARGET}`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type,connect-protocol-version",
        },
      });
      expect(res.status).toBe(204);
      expect(["*", origin]).toContain(res.headers["access-control-allow-origin"]);
      expect([...headerList(res.headers["access-control-allow-methods"])]).toEqual(expect.arrayContaining(["get", "post"]));
      expect([...headerList(res.headers["access-control-allow-headers"])]).toEqual(
        expect.arrayContaining(["authorization", "content-type", "connect-protocol-version", "connect-timeout-ms", "x-grpc-web", "grpc-timeout"]),
      );
    });

    it("adds allow-origin and expose headers to a normal request", async () => {
      const res = await h1(`${server.baseUrl}${GET_TARGET}`, {
        method: "POST",
        headers: { origin, "content-type": "application/json", authorization: `Bearer ${server.adminToken}` },
        body: JSON.stringify({ id: "nope" }),
      });
      expect(res.status).toBe(404);
      expect(["*", origin]).toContain(res.headers["access-control-allow-origin"]);
      expect([...headerList(res.headers["access-control-expose-headers"])]).toEqual(expect.arrayContaining(["grpc-status", "grpc-message", "x-request-id"]));
    });
  });

  describe("x-request-id", () => {
    const auth = () => ({ authorization: `Bearer ${server.adminToken}` });
    const rest = (path: string, headers: Record<string, string> = {}) => h1(`${server.baseUrl}${path}`, { headers: { ...auth(), ...headers } });
    const connect = (method: string, body: object, headers: Record<string, string> = {}) =>
      h1(`${server.baseUrl}/${ACTIONS}/${method}`, {
        method: "POST",
        headers: { ...auth(), "content-type": "application/json", "connect-protocol-version": "1", ...headers },
        body: JSON.stringify(body),
      });

    it("echoes the caller's id on REST success and error responses", async () => {
      const ok = await rest("/resources/v3alpha/executions/functions", { "x-request-id": "rest-ok.1:a" });
      expect(ok.status).toBe(200);
      expect(ok.headers["x-request-id"]).toBe("rest-ok.1:a");
      const missing = await rest("/resources/v3alpha/targets/nope", { "x-request-id": "rest-404" });
      expect(missing.status).toBe(404);
      expect(missing.headers["x-request-id"]).toBe("rest-404");
    });

    it("echoes the caller's id on Connect success and error responses", async () => {
      const ok = await connect("ListAvailableExecutionFunctions", {}, { "x-request-id": "connect-ok" });
      expect(ok.status).toBe(200);
      expect(ok.headers["x-request-id"]).toBe("connect-ok");
      const missing = await connect("GetTarget", { id: "nope" }, { "x-request-id": "connect-404" });
      expect(missing.status).toBe(404);
      expect(missing.headers["x-request-id"]).toBe("connect-404");
    });

    it("generates a fresh id when none (or an unusable one) is sent", async () => {
      const ids = [
        (await rest("/resources/v3alpha/executions/functions")).headers["x-request-id"],
        (await rest("/resources/v3alpha/targets/nope")).headers["x-request-id"],
        (await connect("ListAvailableExecutionFunctions", {})).headers["x-request-id"],
        (await connect("GetTarget", { id: "nope" })).headers["x-request-id"],
        (await connect("GetTarget", { id: "nope" }, { "x-request-id": "x".repeat(500) })).headers["x-request-id"],
      ];
      for (const id of ids) expect(id).toMatch(UUID);
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
});
