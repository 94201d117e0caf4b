import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformActions } from "../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { protocolClient, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { LogCapture, startLoggedServer, type LoggedServer } from "./support.js";

const PROCEDURE = `/${PlatformActions.typeName}/GetTarget`;
const PROTOCOLS: Protocol[] = ["grpc", "grpc-web", "connect", "rest"];

describe.each(DATABASE_KINDS)("request log lines (%s)", (kind) => {
  const logs = new LogCapture();
  let server: LoggedServer;
  beforeAll(async () => {
    server = await startLoggedServer(kind, logs);
  });
  afterAll(() => server?.close());

  const auth = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${server.adminToken}`, ...extra });
  const rpcLines = () => logs.lines.filter((l) => l.msg === "rpc" || l.msg === "rpc failed");
  const lineOf = async (requestId: string) => {
    await expect.poll(() => logs.forRequest(requestId).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const lines = logs.forRequest(requestId);
    expect(lines).toHaveLength(1);
    return lines[0]!;
  };

  /** Holds the targets table locked (on PGlite: the one connection) until the returned release is called. */
  async function lockTargets(): Promise<() => Promise<void>> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    if (kind === "pglite") {
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = server.service.store.db.transaction().execute(async (tx) => {
        await sql`lock table targets in access exclusive mode`.execute(tx);
        locked();
        await released;
      });
      await isLocked;
      return async () => {
        release();
        await holder;
      };
    }
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    await client.query("begin");
    await client.query("lock table targets in access exclusive mode");
    return async () => {
      await client.query("rollback");
      await client.end();
    };
  }

  it("a successful call: info, with request id, procedure, protocol, code ok, status 200 and duration", async () => {
    const res = await fetch(`${server.baseUrl}/resources/v3alpha/executions/functions`, { headers: auth({ "x-request-id": "log-ok" }) });
    expect(res.status).toBe(200);
    expect(await lineOf("log-ok")).toMatchObject({
      level: "info",
      msg: "rpc",
      requestId: "log-ok",
      procedure: `/${PlatformActions.typeName}/ListAvailableExecutionFunctions`,
      protocol: "rest",
      code: "ok",
      status: 200,
      ms: expect.any(Number),
    });
  });

  it.each(PROTOCOLS)("an expected error over %s: info, with the Connect code name and the HTTP status sent", async (protocol) => {
    const before = rpcLines().length;
    const result = await protocolClient(PlatformActions, protocol, server.baseUrl).call("GetTarget", { id: `missing-${protocol}` }, server.adminToken);
    expect(result).toMatchObject({ ok: false, code: Code.NotFound });
    await expect.poll(() => rpcLines().length).toBe(before + 1);
    // gRPC and gRPC-web answer 200 and carry the code in grpc-status.
    const status = protocol === "grpc" || protocol === "grpc-web" ? 200 : 404;
    expect(rpcLines().at(-1)).toMatchObject({ level: "info", procedure: PROCEDURE, protocol, code: "not_found", status, requestId: expect.any(String) });
  });

  it("every request log line has code and status in one form", () => {
    expect(rpcLines().length).toBeGreaterThanOrEqual(5);
    for (const line of rpcLines()) {
      expect(line.code).toMatch(/^[a-z_]+$/);
      expect(line.status).toEqual(expect.any(Number));
    }
  });

  it("a caller that goes away mid-call: info, code canceled, its protocol's status (499 on Connect, 200 on gRPC), and no error anywhere", async () => {
    const release = await lockTargets();
    const errorsBefore = logs.lines.filter((l) => l.level === "error").length;
    try {
      const aborted = new AbortController();
      const call = fetch(`${server.baseUrl}${PROCEDURE}`, {
        method: "POST",
        headers: auth({ "content-type": "application/json", "x-request-id": "log-cancel-h1" }),
        body: JSON.stringify({ id: "blocked" }),
        signal: aborted.signal,
      });
      setTimeout(() => aborted.abort(), 300);
      await expect(call).rejects.toThrow();

      // Over HTTP/2 the caller's cancel arrives as RST_STREAM(CANCEL).
      const grpc = createClient(PlatformActions, createGrpcTransport({ baseUrl: server.baseUrl }));
      const cancelled = new AbortController();
      setTimeout(() => cancelled.abort(), 300);
      const error = await grpc
        .getTarget({ id: "blocked" }, { headers: auth({ "x-request-id": "log-cancel-h2" }), signal: cancelled.signal })
        .catch((e: unknown) => ConnectError.from(e));
      expect(error).toMatchObject({ code: Code.Canceled });

      expect(await lineOf("log-cancel-h1")).toMatchObject({ level: "info", msg: "rpc", code: "canceled", status: 499, procedure: PROCEDURE });
      expect(await lineOf("log-cancel-h2")).toMatchObject({ level: "info", msg: "rpc", code: "canceled", status: 200, procedure: PROCEDURE });
    } finally {
      await release();
    }
    // Not in the chain, not outside it (a failed write of the answer): nothing at error.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logs.lines.filter((l) => l.level === "error").slice(errorsBefore)).toEqual([]);
  });

  it("a call past its deadline: info, code deadline_exceeded, status 504", async () => {
    const release = await lockTargets();
    try {
      // The server's clock decides (a client that enforces the deadline itself would also hang up: a race).
      const res = await fetch(`${server.baseUrl}${PROCEDURE}`, {
        method: "POST",
        headers: auth({ "content-type": "application/json", "connect-timeout-ms": "300", "x-request-id": "log-deadline" }),
        body: JSON.stringify({ id: "blocked" }),
      });
      expect(await res.json()).toMatchObject({ code: "deadline_exceeded" });
      expect(await lineOf("log-deadline")).toMatchObject({ level: "info", code: "deadline_exceeded", status: 504 });
    } finally {
      await release();
    }
  });

  it('an unexpected error: error, with request id and the cause\'s stack; the client reads only "internal error"', async () => {
    // A table gone from under the service: an error no mapping knows.
    await sql`alter table targets rename to targets_away`.execute(server.service.store.db);
    try {
      const res = await fetch(`${server.baseUrl}${PROCEDURE}`, {
        method: "POST",
        headers: auth({ "content-type": "application/json", "x-request-id": "log-internal" }),
        body: JSON.stringify({ id: "any" }),
      });
      expect(res.status).toBe(500);
      const body = (await res.json()) as { code: string; message: string };
      expect(body).toEqual({ code: "internal", message: "internal error" });
      expect(JSON.stringify(body)).not.toContain("targets");
      const line = await lineOf("log-internal");
      expect(line).toMatchObject({ level: "error", msg: "rpc failed", requestId: "log-internal", procedure: PROCEDURE, code: "internal", status: 500 });
      const err = line.err as { message: string; stack: string };
      expect(err.message).toMatch(/targets/);
      expect(err.stack).toEqual(expect.any(String));
    } finally {
      await sql`alter table targets_away rename to targets`.execute(server.service.store.db);
    }
  });
});
