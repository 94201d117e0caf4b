import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create, createRegistry, toJson, type JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { createRestGateway } from "../../src/gateway/gateway.js";
import { openApiDocument } from "../../src/gateway/openapi.js";
import { routesOf } from "../../src/gateway/routes.js";
import { createLogger } from "../../src/log/logger.js";
import { PLATFORM_SERVICES } from "../../src/rpc/services/index.js";
import type { UnaryInvoke } from "../../src/rpc/unary/methods.js";

/**
 * The REST gateway's HttpBody convention (grpc-gateway's): a route whose body field is a
 * google.api.HttpBody takes the request body raw, of any content type, and hands the RPC
 * `{contentType, data}`; other routes still take JSON only. Against the gateway alone, with
 * a method that records the request it is given.
 */

const LIMIT = 64;

describe("the REST gateway's raw bodies (google.api.HttpBody)", () => {
  let server: Server;
  let base: string;
  const received: JsonValue[] = [];

  beforeAll(async () => {
    const routes = routesOf([PlatformBrandingSettings]);
    const record: UnaryInvoke = async (call) => {
      received.push(toJson(call.method.input, call.message));
      return {
        stream: false,
        service: call.method.parent,
        method: call.method,
        header: new Headers(),
        trailer: new Headers(),
        message: create(call.method.output, { url: "/x" } as never),
      };
    };
    const methods = { get: () => record, stream: () => undefined };
    const gateway = createRestGateway({ routes, methods, registry: createRegistry(), maxBodyBytes: LIMIT, jsonOptions: {}, logger: createLogger("silent") });
    server = createServer((req, res) => {
      void gateway(req, res, "localhost").then((handled) => handled || res.writeHead(404).end());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("marks exactly the routes whose body is an HttpBody", () => {
    const raw = routesOf(PLATFORM_SERVICES)
      .filter((r) => r.rawBody)
      .map((r) => `${r.httpMethod} ${r.template.source}`);
    expect(raw).toEqual(["POST /settings/v3alpha/branding/{image}"]);
  });

  it("passes the bytes and their content type as the body field, path and query filling the rest", async () => {
    received.length = 0;
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x0a]);
    const res = await fetch(`${base}/settings/v3alpha/branding/logo?ctx.orgId=o1`, {
      method: "POST",
      headers: { "content-type": "image/png; x=y" },
      body: bytes,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: "/x" });
    expect(received).toEqual([{ image: "logo", content: { contentType: "image/png; x=y", data: bytes.toString("base64") }, ctx: { orgId: "o1" } }]);
    // No content type and no body: an empty HttpBody, for the RPC to judge.
    await fetch(`${base}/settings/v3alpha/branding/icon`, { method: "POST" });
    expect(received[1]).toEqual({ image: "icon", content: {} });
  });

  it("holds raw bodies to the body limit (413), and JSON routes to JSON", async () => {
    received.length = 0;
    const large = await fetch(`${base}/settings/v3alpha/branding/logo`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: Buffer.alloc(LIMIT + 1),
    });
    expect(large.status).toBe(413);
    expect(((await large.json()) as { code: number }).code).toBe(8);
    const json = await fetch(`${base}/settings/v3alpha/branding`, { method: "PATCH", headers: { "content-type": "image/png" }, body: Buffer.from("{}") });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { message: string }).message).toMatch(/unsupported content type image\/png/);
    expect(received).toEqual([]);
    ok(await fetch(`${base}/settings/v3alpha/branding/logo`, { method: "POST", headers: { "content-type": "image/png" }, body: Buffer.alloc(LIMIT) }));
  });

  it("describes a raw body as binary of any type in the OpenAPI document", () => {
    const document = openApiDocument(routesOf([PlatformBrandingSettings]), { title: "t", version: "1" }) as {
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    expect(document.paths["/settings/v3alpha/branding/{image}"]!.post!.requestBody).toEqual({
      required: true,
      description: expect.stringContaining("The raw body, with its Content-Type."),
      content: { "*/*": { schema: { type: "string", format: "binary" } } },
    });
    expect(Object.keys((document.paths["/settings/v3alpha/branding"]!.patch!.requestBody as { content: object }).content)).toEqual(["application/json"]);
  });
});

function ok(res: Response) {
  expect(res.status).toBe(200);
}
