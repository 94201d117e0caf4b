import { randomBytes } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import { gunzipSync, gzipSync } from "node:zlib";
import { fromBinary, fromJson, toBinary, toJson, type DescMethodUnary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { CallHeaders } from "../../src/rpc/unary/call-headers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * src/rpc/unary/ answers the common unary calls itself and leaves the rest to connect-node
 * (src/server/app.ts, `dispatch`). Each case here sends one call both ways and expects the
 * same answer: an uncompressed call, which the fast path takes, and the same call with a
 * gzipped body, which `serveUnary` hands to connect-node before reading anything (it takes
 * gRPC only with no grpc-encoding or "identity", Connect only with no content-encoding or
 * "identity").
 *
 * Which path answered is counted, not assumed: both fast-path front ends begin with
 * `CallHeaders.fromIncoming`, which nothing else on a procedure's path calls (connect-node
 * builds its own Headers). One call of it and the answer is the fast path's (the fallback to
 * connect-node after reading, for a body that is not one plain message, does not happen: every
 * fast-path body here is one plain message); none, and connect-node answered.
 */

const SERVICE = `/${PlatformActions.typeName}`;
const METHODS = PlatformActions.method;
type MethodName = "getTarget" | "searchTargets";

/** Differ between the two answers for reasons of the wire, not of the call. */
const IGNORED_HEADERS = new Set(["date", "content-length", "content-encoding"]);

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** gRPC's trailers as sent, apart from the head: a trailers-only answer would show here. */
  trailers?: http.IncomingHttpHeaders;
  body: Buffer;
}

/** What both paths must agree on. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  trailers?: Record<string, string>;
  /** Whether the answer was compressed (content-encoding itself is left out of `headers`). */
  compressed: boolean;
  body: JsonValue;
}

function comparable(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || IGNORED_HEADERS.has(name) || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function h1Request(url: string, headers: Record<string, string>, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A connection of its own: an answer given before the body was read must not spoil the next call.
    const req = http.request(url, { method: "POST", headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    // The server may answer an over-large body before it has all of it, and close.
    req.on("error", (error) => answered || reject(error));
    req.end(body);
  });
}

function h2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ...headers });
    let head: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader = {};
    let trailers: http.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (head = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status: Number(head[":status"]), headers: head, trailers, body: Buffer.concat(chunks) }));
    stream.on("error", reject);
    stream.end(body);
  });
}

/** A gRPC message frame. */
function frame(flags: number, payload: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = flags;
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}

function connectAnswer(raw: RawAnswer, method: DescMethodUnary): Answer {
  const compressed = raw.headers["content-encoding"] === "gzip";
  const bytes = compressed ? gunzipSync(raw.body) : raw.body;
  const proto = raw.headers["content-type"] === "application/proto";
  const body = proto ? toJson(method.output, fromBinary(method.output, bytes)) : (JSON.parse(bytes.toString()) as JsonValue);
  return { status: raw.status, headers: comparable(raw.headers), compressed, body };
}

function grpcAnswer(raw: RawAnswer, method: DescMethodUnary): Answer {
  const messages: JsonValue[] = [];
  let compressed = false;
  for (let at = 0; at < raw.body.length;) {
    const length = raw.body.readUInt32BE(at + 1);
    const payload = raw.body.subarray(at + 5, at + 5 + length);
    compressed ||= raw.body[at] === 1;
    messages.push(toJson(method.output, fromBinary(method.output, raw.body[at] === 1 ? gunzipSync(payload) : payload)));
    at += 5 + length;
  }
  return { status: raw.status, headers: comparable(raw.headers), trailers: raw.trailers && comparable(raw.trailers), compressed, body: messages };
}

interface Case {
  name: string;
  method: MethodName;
  request: (ctx: Context) => JsonObject;
  token: (ctx: Context) => string | undefined;
  /** A JSON body as sent, instead of `request` (what the message type cannot hold). */
  json?: string;
  connectHeaders?: Record<string, string>;
  grpcHeaders?: Record<string, string>;
  /** Not for binary bodies (which cannot hold it). */
  jsonOnly?: boolean;
  /** Answers whose numbers legitimately differ (sizes on the wire): made comparable. */
  normalize?: (answer: Answer) => Answer;
  /** The answer is over compressMinBytes: that both paths compressed it is checked, not just that they agree. */
  compressedAnswer?: boolean;
}

interface Context {
  server: TestServer;
  targetId: string;
  unprivileged: string;
}

const admin = (ctx: Context) => ctx.server.adminToken;
const LIMIT = 1024 * 1024;
/** Base64 of random bytes: about 3/4 of it survives gzip, so both forms stay over the limit. */
const OVER_LIMIT = randomBytes(LIMIT * 2)
  .toString("base64")
  .slice(0, LIMIT * 2);
/** The fast path names the bytes it read, connect-node those declared: both over the same limit. */
const sizeless = (answer: Answer): Answer => JSON.parse(JSON.stringify(answer).replace(/message(%20| )size(%20| )\d+/g, "message$1size$2N")) as Answer;

const CASES: Case[] = [
  { name: "a success", method: "getTarget", request: (ctx) => ({ id: ctx.targetId }), token: admin },
  // Over compressMinBytes: the answer is compressed by both paths (accept-encoding: gzip is sent).
  { name: "a success large enough to be compressed", method: "searchTargets", request: () => ({}), token: admin, compressedAnswer: true },
  { name: "no token (Unauthenticated)", method: "getTarget", request: (ctx) => ({ id: ctx.targetId }), token: () => undefined },
  { name: "an unknown token (Unauthenticated)", method: "getTarget", request: (ctx) => ({ id: ctx.targetId }), token: () => "this-token-does-not-exist-0123" },
  { name: "no permission (PermissionDenied)", method: "getTarget", request: (ctx) => ({ id: ctx.targetId }), token: (ctx) => ctx.unprivileged },
  { name: "a target that does not exist (NotFound)", method: "getTarget", request: () => ({ id: "does-not-exist" }), token: admin },
  { name: "a protovalidate failure (InvalidArgument, with details)", method: "getTarget", request: () => ({ id: "" }), token: admin },
  {
    name: "a malformed deadline header",
    method: "getTarget",
    request: (ctx) => ({ id: ctx.targetId }),
    token: admin,
    connectHeaders: { "connect-timeout-ms": "soon" },
    grpcHeaders: { "grpc-timeout": "soon" },
  },
  {
    name: "a deadline header with too many digits",
    method: "getTarget",
    request: (ctx) => ({ id: ctx.targetId }),
    token: admin,
    connectHeaders: { "connect-timeout-ms": "12345678901" },
    grpcHeaders: { "grpc-timeout": "123456789S" },
  },
  { name: "an unknown field in JSON", method: "getTarget", request: () => ({}), json: '{"id":"x","bogus":1}', token: admin, jsonOnly: true },
  {
    name: "a body over maxBodyBytes (ResourceExhausted)",
    method: "getTarget",
    request: () => ({ id: OVER_LIMIT }),
    token: admin,
    normalize: sizeless,
    // Over HTTP/1.1 both name the declared content-length; over HTTP/2 without one, neither names a size.
  },
];

describe.each(DATABASE_KINDS)("the unary fast path answers as connect-node (%s)", (kind) => {
  let server: TestServer;
  let session: http2.ClientHttp2Session;
  let fastPath: MockInstance<typeof CallHeaders.fromIncoming>;
  const ctx = {} as Context;

  beforeAll(async () => {
    server = await startTestServer(kind);
    session = http2.connect(server.baseUrl);
    fastPath = vi.spyOn(CallHeaders, "fromIncoming");
    ctx.server = server;
    ctx.unprivileged = (await server.createUser({ roles: [] })).token;
    // Enough targets that SearchTargets' answer is over compressMinBytes (1 KiB).
    for (let i = 0; i < 12; i++) {
      const request = { target: { name: `parity-${i}-${"n".repeat(80)}`, restWebhook: { url: `https://example.com/${i}` } } };
      const raw = await h1Request(`${server.baseUrl}${SERVICE}/CreateTarget`, connectHeaders("json", server.adminToken), Buffer.from(JSON.stringify(request)));
      expect(raw.status, raw.body.toString()).toBe(200);
      ctx.targetId ??= (JSON.parse(raw.body.toString()) as { details: { id: string } }).details.id;
    }
  });
  afterAll(async () => {
    fastPath?.mockRestore();
    session?.close();
    await server?.close();
  });

  function connectHeaders(codec: "json" | "proto", token: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
    return {
      "content-type": `application/${codec}`,
      "connect-protocol-version": "1",
      "accept-encoding": "gzip",
      // Sent, so that the id echoed back is the same on both paths (it is made up when absent).
      "x-request-id": "unary-parity",
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...extra,
    };
  }

  /** The fast path's answer and connect-node's, each proven to come from its path. */
  async function both(send: (compressed: boolean) => Promise<Answer>): Promise<{ fast: Answer; connectNode: Answer }> {
    fastPath.mockClear();
    const fast = await send(false);
    expect(fastPath, "the uncompressed call takes the fast path").toHaveBeenCalledTimes(1);
    fastPath.mockClear();
    const connectNode = await send(true);
    expect(fastPath, "the compressed call goes to connect-node").not.toHaveBeenCalled();
    return { fast, connectNode };
  }

  for (const transport of ["http/1.1", "h2"] as const) {
    for (const codec of ["json", "proto"] as const) {
      describe(`Connect (${codec}) over ${transport}: uncompressed vs gzip`, () => {
        for (const c of CASES) {
          if (c.jsonOnly && codec !== "json") continue;
          it(c.name, async () => {
            const method = METHODS[c.method] as DescMethodUnary;
            const path = `${SERVICE}/${method.name}`;
            const payload =
              c.json !== undefined
                ? Buffer.from(c.json)
                : codec === "json"
                  ? Buffer.from(JSON.stringify(c.request(ctx)))
                  : Buffer.from(toBinary(method.input, fromJson(method.input, c.request(ctx))));
            const { fast, connectNode } = await both(async (compressed) => {
              const headers = connectHeaders(codec, c.token(ctx), { ...c.connectHeaders, ...(compressed && { "content-encoding": "gzip" }) });
              const body = compressed ? gzipSync(payload) : payload;
              const raw =
                transport === "h2" ? await h2Request(session, { ":path": path, ...headers }, body) : await h1Request(`${server.baseUrl}${path}`, headers, body);
              const answer = connectAnswer(raw, method);
              return c.normalize ? c.normalize(answer) : answer;
            });
            expect(connectNode).toEqual(fast);
            expect(fast.compressed).toBe(c.compressedAnswer === true);
          });
        }
      });
    }
  }

  describe("gRPC over h2: grpc-encoding identity vs gzip", () => {
    for (const c of CASES) {
      if (c.jsonOnly) continue;
      it(c.name, async () => {
        const method = METHODS[c.method] as DescMethodUnary;
        const payload = toBinary(method.input, fromJson(method.input, c.request(ctx)));
        const token = c.token(ctx);
        const { fast, connectNode } = await both(async (compressed) => {
          const raw = await h2Request(
            session,
            {
              ":path": `${SERVICE}/${method.name}`,
              "content-type": "application/grpc",
              te: "trailers",
              "grpc-encoding": compressed ? "gzip" : "identity",
              "grpc-accept-encoding": "gzip",
              "x-request-id": "unary-parity",
              ...(token !== undefined && { authorization: `Bearer ${token}` }),
              ...c.grpcHeaders,
            },
            compressed ? frame(1, gzipSync(payload)) : frame(0, payload),
          );
          const answer = grpcAnswer(raw, method);
          return c.normalize ? c.normalize(answer) : answer;
        });
        expect(connectNode).toEqual(fast);
        expect(fast.compressed).toBe(c.compressedAnswer === true);
      });
    }
  });

  it("a Connect GET goes to connect-node, which refuses it: no method is declared free of side effects (idempotency_level)", async () => {
    const message = encodeURIComponent(JSON.stringify({ id: ctx.targetId }));
    fastPath.mockClear();
    const path = `${SERVICE}/GetTarget?connect=v1&encoding=json&message=${message}`;
    const stream = session.request({ ":method": "GET", ":path": path, authorization: `Bearer ${server.adminToken}` });
    const status = await new Promise<number>((resolve, reject) => {
      stream.on("response", (h) => resolve(Number(h[":status"])));
      stream.on("error", reject);
      stream.resume();
    });
    expect(status).toBe(405);
    expect(fastPath).not.toHaveBeenCalled();
    // Were one declared so, its GET would be connect-node's and its POST the fast path's: a pair to add here.
    expect(PlatformActions.methods.filter((m) => m.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS)).toEqual([]);
  });
});
