import http2 from "node:http2";
import net from "node:net";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { LogCapture, startLoggedServer, type LoggedServer } from "./support.js";

const GET_TARGET = `/${PlatformActions.typeName}/GetTarget`;
/** What each protocol answers a NotFound with: gRPC and gRPC-web carry the code in grpc-status, on a 200. */
const NOT_FOUND_ON_THE_WIRE: Record<Protocol, number> = { grpc: 200, "grpc-web": 200, connect: 404, "connect-h2": 404, rest: 404 };
const CREATE_TARGET_BODY = JSON.stringify({ name: "never-complete", endpoint: "https://example.com/hook", timeout: "5s", restCall: {} });

describe.each(DATABASE_KINDS)("request log lines: the status on the wire, and callers that leave (%s)", (kind) => {
  const logs = new LogCapture();
  let server: LoggedServer;
  beforeAll(async () => {
    server = await startLoggedServer(kind, logs);
  });
  afterAll(() => server?.close());

  const rpcLines = () => logs.lines.filter((l) => l.msg === "rpc" || l.msg === "rpc failed");
  const errorLines = () => logs.lines.filter((l) => l.level === "error");

  it.each(Object.keys(NOT_FOUND_ON_THE_WIRE) as Protocol[])("an error over %s logs its code and the HTTP status that was sent", async (protocol) => {
    const before = rpcLines().length;
    const result = await protocolClient(PlatformActions, protocol, server.baseUrl).call("GetTarget", { id: `wire-${protocol}` }, server.adminToken);
    expect(result).toMatchObject({ ok: false, code: Code.NotFound });
    await expect.poll(() => rpcLines().length).toBe(before + 1);
    const logged = protocol === "connect-h2" ? "connect" : protocol;
    expect(rpcLines().at(-1)).toMatchObject({ procedure: GET_TARGET, protocol: logged, code: "not_found", status: NOT_FOUND_ON_THE_WIRE[protocol] });
  });

  it("a success over gRPC logs 200 and a REST creation the 201 it answered", async () => {
    const grpc = await protocolClient(PlatformActions, "grpc", server.baseUrl).call("ListAvailableExecutionFunctions", {}, server.adminToken);
    expect(grpc).toMatchObject({ ok: true });
    expect(rpcLines().at(-1)).toMatchObject({ protocol: "grpc", code: "ok", status: 200 });

    const res = await fetch(`${server.baseUrl}/resources/v3alpha/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json", "x-request-id": "wire-created" },
      body: JSON.stringify({ name: "Wire Status Org" }),
    });
    expect(res.status).toBe(201);
    await expect.poll(() => logs.forRequest("wire-created").length).toBe(1);
    expect(logs.forRequest("wire-created")[0]).toMatchObject({ protocol: "rest", code: "ok", status: 201 });
  });

  /**
   * Waits for the gateway's line about `path` logged after line `since`, at whatever level it
   * came. Lines name the path only: a query may carry a secret (a session's token).
   */
  const gatewayLine = async (path: string, since: number) => {
    const find = () => logs.lines.slice(since).find((l) => l.path === path.split("?")[0] && l.url === undefined);
    await expect.poll(find, { timeout: 10_000 }).toBeDefined();
    return find()!;
  };

  it("a REST caller that disconnects in the middle of its body (HTTP/1.1): info, nothing at error", async () => {
    const errorsBefore = errorLines().length;
    const linesBefore = logs.lines.length;
    const path = "/resources/v3alpha/targets?leave=h1";
    const socket = net.connect(Number(new URL(server.baseUrl).port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${server.adminToken}\r\n` +
        `content-type: application/json\r\ncontent-length: ${CREATE_TARGET_BODY.length}\r\n\r\n${CREATE_TARGET_BODY.slice(0, 10)}`,
    );
    // The head is read and the body awaited before the caller goes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    expect(await gatewayLine(path, linesBefore)).toMatchObject({
      level: "info",
      msg: "the REST caller went away before its answer",
      code: "canceled",
      status: 499,
    });
    expect(errorLines().slice(errorsBefore)).toEqual([]);
  });

  it("a REST caller that cancels its stream in the middle of its body (HTTP/2): info, nothing at error", async () => {
    const errorsBefore = errorLines().length;
    const linesBefore = logs.lines.length;
    const path = "/resources/v3alpha/targets?leave=h2";
    const session = http2.connect(server.baseUrl);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        authorization: `Bearer ${server.adminToken}`,
        "content-type": "application/json",
        "content-length": String(CREATE_TARGET_BODY.length),
      });
      stream.on("error", () => {});
      stream.write(CREATE_TARGET_BODY.slice(0, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      stream.close(http2.constants.NGHTTP2_CANCEL);
      expect(await gatewayLine(path, linesBefore)).toMatchObject({ level: "info", code: "canceled", status: 499 });
    } finally {
      session.close();
    }
    expect(errorLines().slice(errorsBefore)).toEqual([]);
  });
});
