import http2 from "node:http2";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { h1, h2 } from "./raw-http.js";

const SERVICE = "/platform.resources.action.v3alpha.PlatformActions";

/** A gRPC/gRPC-web message frame: flags 0, big-endian length, payload. */
function frame(payload: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}
/** Protobuf field `number` (length-delimited) with the given bytes. */
const lengthDelimited = (number: number, bytes: Buffer) => Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);

const GARBAGE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f, 0x01, 0x99, 0x42]);
const NOT_UTF8 = Buffer.from([0x61, 0xc3, 0x28, 0xff]);
/** CreateTargetRequest { target: Target { name: <not UTF-8> } } */
const CREATE_WITH_BAD_NAME = lengthDelimited(1, lengthDelimited(1, NOT_UTF8));

/** One raw request over HTTP/1.1 with exactly these header lines, answered on a fresh socket. */
function rawHttp1(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(head));
    let data = "";
    socket.on("data", (chunk) => (data += chunk.toString()));
    socket.on("end", () => resolve(data));
    socket.on("error", reject);
  });
}

/**
 * A unary gRPC call with a raw body (or whatever `send` writes), and further `headers`;
 * resolves with grpc-status and grpc-message.
 */
async function grpcRaw(
  session: http2.ClientHttp2Session,
  method: string,
  body: Buffer,
  token: string,
  send: (stream: http2.ClientHttp2Stream) => void = (stream) => void stream.end(frame(body)),
  extraHeaders: Record<string, string> = {},
) {
  return new Promise<{ status: string; message: string }>((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": `${SERVICE}/${method}`,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${token}`,
      ...extraHeaders,
    });
    let headers: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (headers = { ...headers, ...t }));
    stream.on("end", () => resolve({ status: String(headers["grpc-status"]), message: decodeURIComponent(String(headers["grpc-message"] ?? "")) }));
    stream.on("error", reject);
    stream.resume();
    send(stream);
  });
}

describe.each(DATABASE_KINDS)("strict input and answers (%s)", (kind) => {
  let server: TestServer;
  let session: http2.ClientHttp2Session;
  let port: number;

  beforeAll(async () => {
    server = await startTestServer(kind);
    port = server.service.port;
    session = http2.connect(server.baseUrl);
  });
  afterAll(async () => {
    session?.close();
    await server?.close();
  });

  describe("binary bodies that do not decode", () => {
    it("are InvalidArgument with a generic message on gRPC", async () => {
      const res = await grpcRaw(session, "GetTarget", GARBAGE, server.adminToken);
      expect(res.status).toBe(String(Code.InvalidArgument));
      expect(res.message).toBe("the request body is not a valid platform.resources.action.v3alpha.GetTargetRequest message");
    });

    it("are InvalidArgument on gRPC-web and Connect (400)", async () => {
      const web = await h1(`${server.baseUrl}${SERVICE}/GetTarget`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto", authorization: `Bearer ${server.adminToken}` },
        body: frame(GARBAGE).toString("latin1"),
      });
      expect(web.status).toBe(200);
      expect(web.headers["grpc-status"] ?? web.body).toMatch(/grpc-status:\s*3|^3$/);
      const connectRes = await fetch(`${server.baseUrl}${SERVICE}/GetTarget`, {
        method: "POST",
        headers: { "content-type": "application/proto", authorization: `Bearer ${server.adminToken}` },
        body: GARBAGE,
      });
      expect(connectRes.status).toBe(400);
      const body = (await connectRes.json()) as { code: string; message: string };
      expect(body.code).toBe("invalid_argument");
      expect(body.message).not.toMatch(/parse binary|illegal tag|overflow/);
    });

    it("name the field whose text is not UTF-8 (gRPC and Connect)", async () => {
      const res = await grpcRaw(session, "CreateTarget", CREATE_WITH_BAD_NAME, server.adminToken);
      expect(res.status).toBe(String(Code.InvalidArgument));
      expect(res.message).toContain("target.name");
      const connectRes = await fetch(`${server.baseUrl}${SERVICE}/CreateTarget`, {
        method: "POST",
        headers: { "content-type": "application/proto", authorization: `Bearer ${server.adminToken}` },
        body: CREATE_WITH_BAD_NAME,
      });
      expect(connectRes.status).toBe(400);
      expect(((await connectRes.json()) as { message: string }).message).toContain("target.name");
    });

    it("leave a valid binary call alone", async () => {
      const res = await grpcRaw(session, "SearchTargets", Buffer.alloc(0), server.adminToken);
      expect(res.status).toBe("0");
    });

    it("are read as their content-encoding says: a gzipped Connect body is checked uncompressed", async () => {
      const call = (body: Buffer) =>
        fetch(`${server.baseUrl}${SERVICE}/CreateTarget`, {
          method: "POST",
          headers: { "content-type": "application/proto", "content-encoding": "gzip", authorization: `Bearer ${server.adminToken}` },
          body: gzipSync(body),
        });
      const valid = lengthDelimited(
        1,
        Buffer.concat([lengthDelimited(1, Buffer.from("gzipped")), lengthDelimited(2, lengthDelimited(1, Buffer.from("https://example.com")))]),
      );
      const ok = await call(valid);
      expect(ok.status, await ok.clone().text()).toBe(200);
      const bad = await call(CREATE_WITH_BAD_NAME);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { message: string }).message).toContain("target.name");
    });

    it("are checked however the envelope is split across chunks", async () => {
      const res = await grpcRaw(session, "CreateTarget", CREATE_WITH_BAD_NAME, server.adminToken, (stream) => {
        const bytes = frame(CREATE_WITH_BAD_NAME);
        // Three bytes of the prefix, then the rest a byte at a time.
        stream.write(bytes.subarray(0, 3));
        for (let i = 3; i < bytes.length; i++) stream.write(bytes.subarray(i, i + 1));
        stream.end();
      });
      expect(res.status).toBe(String(Code.InvalidArgument));
      expect(res.message).toContain("target.name");
    });
  });

  describe("the Host header", () => {
    const get = (headers: string) => rawHttp1(port, `GET /resources/v3alpha/targets/x HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

    it.each([
      ["userinfo", `Host: user@localhost:PORT\r\n`],
      ["a path", `Host: localhost:PORT/resources\r\n`],
      ["white space inside", `Host: local host:PORT\r\n`],
      ["two Host headers", `Host: localhost:PORT\r\nHost: other.example:PORT\r\n`],
      ["no Host header", ``],
    ])("with %s is 400", async (_what, headers) => {
      const answer = await get(headers.replaceAll("PORT", String(port)));
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    });

    it("on HTTP/2, :authority decides and a host header that differs is 400", async () => {
      const differs = await h2(session, "/resources/v3alpha/targets/x", {
        headers: { ":authority": `localhost:${port}`, host: "other.example", authorization: `Bearer ${server.adminToken}` },
      });
      expect(differs.status).toBe(400);
      const agrees = await h2(session, "/resources/v3alpha/targets/x", {
        headers: { host: `localhost:${port}`, authorization: `Bearer ${server.adminToken}` },
      });
      expect(agrees.status).toBe(404);
      expect(JSON.parse(agrees.body).message).toContain("target");
    });

    it("names its host in any case, over every protocol: the instance is the same", async () => {
      const host = `LocalHost:${port}`;
      const rest = await h1(`http://127.0.0.1:${port}/resources/v3alpha/targets/x`, { headers: { host, authorization: `Bearer ${server.adminToken}` } });
      expect(rest.status).toBe(404);
      expect(JSON.parse(rest.body).message).toContain("target");
      const connect = await h1(`http://127.0.0.1:${port}${SERVICE}/GetTarget`, {
        method: "POST",
        headers: { host, authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ id: "x" }),
      });
      expect(connect.status).toBe(404);
      expect(JSON.parse(connect.body).message).toContain("target");
      const grpc = await grpcRaw(session, "GetTarget", lengthDelimited(1, Buffer.from("x")), server.adminToken, undefined, { ":authority": host });
      expect(grpc.status).toBe(String(Code.NotFound));
      expect(grpc.message).toContain("target");
    });

    it("a host name longer than any kept for reuse is still read, each time", async () => {
      const long = `${Array.from({ length: 5 }, (_, i) => `${"l".repeat(62)}${i}`).join(".")}.example`;
      for (let i = 0; i < 2; i++) {
        const res = await h1(`http://127.0.0.1:${port}/resources/v3alpha/targets/_search`, {
          method: "POST",
          headers: { host: `${long}:${port}`, authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
          body: "[]",
        });
        expect(res.status).toBe(404);
        expect(JSON.parse(res.body).message).toBe(`no instance serves the host "${long}"`);
      }
    });

    it("127.0.0.1 and [::1] reach the first instance when it is served as localhost", async () => {
      const search = (host: string) =>
        h1(`http://127.0.0.1:${port}/resources/v3alpha/targets/_search`, {
          method: "POST",
          headers: { host, authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
          body: "[]",
        });
      expect((await search(`127.0.0.1:${port}`)).status).toBe(200);
      expect((await search(`[::1]:${port}`)).status).toBe(200);
      const unknown = await search(`elsewhere.example:${port}`);
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body).message).toBe('no instance serves the host "elsewhere.example"');
    });
  });

  describe("401 answers", () => {
    it.each(["rest", "connect"] as const)("carry WWW-Authenticate on %s (RFC 6750)", async (protocol) => {
      const url = protocol === "rest" ? `${server.baseUrl}/resources/v3alpha/targets/_search` : `${server.baseUrl}${SERVICE}/SearchTargets`;
      const call = (authorization?: string) =>
        h1(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...(authorization && { authorization }) },
          body: protocol === "rest" ? "[]" : "{}",
        });
      const none = await call();
      expect(none.status).toBe(401);
      expect(none.headers["www-authenticate"]).toBe("Bearer");
      const wrong = await call("Bearer this-token-does-not-exist-0123");
      expect(wrong.status).toBe(401);
      expect(wrong.headers["www-authenticate"]).toMatch(/^Bearer error="invalid_token"/);
      const garbled = await call("Basic dXNlcjpwYXNz");
      expect(garbled.status).toBe(401);
      expect(garbled.headers["www-authenticate"]).toMatch(/^Bearer error="invalid_token"/);
    });
  });

  describe("details.processedSequence", () => {
    it("counts the caller's own instance only: another tenant's writes do not move it", async () => {
      const other = await server.createInstance("tenant-b.example");
      const mine = protocolClient(PlatformActions, "rest", server.baseUrl);
      const processed = async () => {
        const res = await mine.call("SearchTargets", {}, server.adminToken);
        if (!res.ok) throw new Error(res.message);
        return BigInt(String((res.message.details as { processedSequence?: string }).processedSequence ?? "0"));
      };
      const create = (name: string) => ({ target: { name, restWebhook: { url: "https://example.com" } } });
      expect(await mine.call("CreateTarget", create("seq-mine-1"), server.adminToken)).toMatchObject({ ok: true });
      const before = await processed();

      // The other tenant's writes reach the service by its own host name.
      const headers = { host: `tenant-b.example:${port}`, authorization: `Bearer ${other.adminToken}`, "content-type": "application/json" };
      for (let i = 0; i < 5; i++) {
        const res = await h1(`${server.baseUrl}/resources/v3alpha/targets`, {
          method: "POST",
          headers,
          body: JSON.stringify(create(`seq-theirs-${i}`).target),
        });
        expect(res.status).toBe(201);
      }
      expect(await processed()).toBe(before);

      expect(await mine.call("CreateTarget", create("seq-mine-2"), server.adminToken)).toMatchObject({ ok: true });
      // Exactly one more: a count of this instance's events, not a global position.
      expect(await processed()).toBe(before + 1n);
    });
  });
  describe("request fields in the wrong place over REST", () => {
    const headers = () => ({ authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" });
    const users = "/resources/v3alpha/users";

    it("a body sent to an endpoint that reads none is 400 naming the query parameters, not dropped; an empty object is fine", async () => {
      const created = await h1(`${server.baseUrl}${users}`, {
        method: "POST",
        headers: headers(),
        body: '{"username":"wrongplace","human":{"profile":{"givenName":"W","familyName":"P"},"email":{"address":"wrongplace@mail.example"}}}',
      });
      expect(created.status, created.body).toBe(201);
      const id = JSON.parse(created.body).details.id as string;
      const resend = (body: string) => h1(`${server.baseUrl}${users}/${id}/email/_resend_code`, { method: "POST", headers: headers(), body });
      const refused = await resend('{"returnCode":true}');
      expect(refused.status, refused.body).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({
        code: Code.InvalidArgument,
        message: "this endpoint takes no request body: give returnCode as query parameters (?returnCode=…)",
      });
      expect((await resend("{}")).status).toBe(200);
      const asQuery = await h1(`${server.baseUrl}${users}/${id}/email/_resend_code?returnCode=true`, { method: "POST", headers: headers(), body: "" });
      expect(asQuery.status, asQuery.body).toBe(200);
      expect(JSON.parse(asQuery.body).code).toMatch(/^[A-Z0-9]{8}$/);
    });

    it("a field of the request inside a body that is one of its fields says it is a query parameter", async () => {
      const res = await h1(`${server.baseUrl}${users}`, {
        method: "POST",
        headers: headers(),
        body: '{"username":"inbody","human":{"email":{"address":"inbody@mail.example"}},"returnCode":true}',
      });
      expect(res.status, res.body).toBe(400);
      expect(JSON.parse(res.body).message).toBe("returnCode is a query parameter of this endpoint, not a field of its body (?returnCode=…)");
    });
  });

  describe("JSON keys that name the prototype", () => {
    const polluted = () => ({}) as Record<string, unknown>;
    const bodies: [string, string][] = [
      ["__proto__ at the top", '{"name":"p1","restWebhook":{"url":"https://example.com"},"__proto__":{"polluted":true}}'],
      ["__proto__ nested", '{"name":"p2","restWebhook":{"url":"https://example.com","__proto__":{"polluted":true}}}'],
      ["constructor.prototype", '{"name":"p3","restWebhook":{"url":"https://example.com"},"constructor":{"prototype":{"polluted":true}}}'],
    ];
    it.each(bodies)("are unknown fields on REST and Connect (400), and change no prototype: %s", async (_, body) => {
      const headers = { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" };
      const rest = await h1(`${server.baseUrl}/resources/v3alpha/targets`, { method: "POST", headers, body });
      expect(rest.status, rest.body).toBe(400);
      expect(JSON.parse(rest.body)).toMatchObject({ code: Code.InvalidArgument });
      const connect = await h1(`${server.baseUrl}${SERVICE}/CreateTarget`, { method: "POST", headers, body: `{"target":${body}}` });
      expect(connect.status, connect.body).toBe(400);
      // The service runs in this process: its objects would show it.
      expect(polluted().polluted).toBeUndefined();
      expect(Object.getPrototypeOf(polluted())).toBe(Object.prototype);
    });
  });
});
