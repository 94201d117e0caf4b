/**
 * The baseline: bare node:http and node:http2 (cleartext) servers doing the service's SQL
 * for each scenario, on a pg pool of the same size, with no auth, validation or protobuf.
 * Run as a child process; prints {"http1":port,"http2":port} once listening.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { instanceSequence } from "../src/store/instance-sequence.js";
import { HOST, POOL_SIZE } from "./settings.js";

const INT8 = 20;
const instanceId = process.env.BASELINE_INSTANCE_ID!;
const pool = new pg.Pool({
  connectionString: process.env.BASELINE_DATABASE_URL,
  max: POOL_SIZE,
  // As the service: int8 columns become numbers.
  types: {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      oid === INT8 ? Number : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
  },
});

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

interface TargetRow {
  instance_id: string;
  id: string;
  name: string;
  target_type: string;
  url: string;
  timeout_ms: number;
  execution_mode: string;
  created_at: Date;
  change_date: Date;
  sequence: number;
}

const details = (r: Pick<TargetRow, "id" | "sequence" | "change_date" | "instance_id">) => ({
  id: r.id,
  sequence: String(r.sequence),
  changeDate: r.change_date.toISOString(),
  resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: r.instance_id },
});

const view = (r: TargetRow) => ({
  details: details(r),
  target: { name: r.name, restWebhook: { url: r.url }, timeout: `${r.timeout_ms / 1000}s` },
});

async function getTarget(id: string) {
  const { rows } = await pool.query<TargetRow>('select * from "targets" where "instance_id" = $1 and "id" = $2', [instanceId, id]);
  return rows[0] ? { status: 200, body: { target: view(rows[0]) } } : { status: 404, body: { code: 5, message: "not found" } };
}

async function searchTargets(limit: number) {
  const [found, state] = await Promise.all([
    pool.query<TargetRow & { total: number }>(
      'select *, count(*) over() as "total" from "targets" where "instance_id" = $1 order by "created_at" desc, "id" desc limit $2 offset $3',
      [instanceId, limit, 0],
    ),
    pool.query<{ instance_position: number; created_at: Date }>(
      'select "instance_position", "created_at" from "events" where "instance_id" = $1 and "aggregate_type" = $2 order by "position" desc limit $3',
      [instanceId, "target", 1],
    ),
  ]);
  const total = found.rows[0]?.total ?? 0;
  return {
    status: 200,
    body: {
      details: {
        appliedLimit: limit,
        // proto3 JSON leaves out false, as the service does.
        ...(found.rows.length >= total && { endOfList: true }),
        totalResult: String(total),
        processedSequence: String(state.rows[0]?.instance_position ?? 0),
        timestamp: state.rows[0]?.created_at.toISOString(),
      },
      result: found.rows.map(view),
    },
  };
}

/** The same UUIDv7 layout as the service's ids. */
function newId(): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** One transaction, as the service's CreateTarget: name check, event, projection row. */
async function createTarget(input: { name: string; url: string }) {
  const spec = { name: input.name, kind: "rest_webhook", url: input.url, timeoutMs: 10_000, mode: "sync" };
  const id = newId();
  const signingKey = randomBytes(27).toString("base64url");
  const client = await pool.connect();
  try {
    await client.query("begin");
    const taken = await client.query('select "id" from "targets" where "instance_id" = $1 and "name" = $2', [instanceId, spec.name]);
    if (taken.rows.length > 0) {
      await client.query("rollback");
      return { status: 409, body: { code: 6, message: "already exists" } };
    }
    const event = await client.query<{ sequence: number; created_at: Date }>(
      'insert into "events" ("instance_id", "aggregate_type", "aggregate_id", "sequence", "event_type", "payload", "creator", "instance_position") values ($1, $2, $3, $4, $5, $6, $7, nextval($8::regclass)) returning "sequence", "created_at"',
      [instanceId, "target", id, 1, "target.added", JSON.stringify(spec), "baseline", instanceSequence(instanceId)],
    );
    const { sequence, created_at } = event.rows[0]!;
    await client.query(
      'insert into "targets" ("instance_id", "id", "name", "target_type", "url", "timeout_ms", "execution_mode", "signing_key", "created_at", "change_date", "sequence") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [instanceId, id, spec.name, spec.kind, spec.url, spec.timeoutMs, spec.mode, signingKey, created_at, created_at, sequence],
    );
    await client.query("commit");
    return { status: 201, body: { details: details({ id, sequence, change_date: created_at, instance_id: instanceId }), signingKey } };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

function readBody(req: Req): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

async function route(req: Req): Promise<{ status: number; body: unknown }> {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  if (req.method === "GET" && path.startsWith("/targets/")) return getTarget(decodeURIComponent(path.slice(9)));
  if (req.method === "POST" && path === "/targets/_search") {
    await readBody(req);
    return searchTargets(100);
  }
  if (req.method === "POST" && path === "/targets") {
    const input = JSON.parse(await readBody(req)) as { name: string; url?: string };
    return createTarget({ name: input.name, url: input.url ?? "https://example.com/hook" });
  }
  return { status: 404, body: { code: 5, message: `no endpoint at ${req.method} ${path}` } };
}

function handle(req: Req, res: Res): void {
  route(req).then(
    ({ status, body }) => send(res, status, body),
    (error: unknown) => send(res, 500, { code: 13, message: String(error) }),
  );
}

function send(res: Res, status: number, body: unknown): void {
  const json = Buffer.from(JSON.stringify(body));
  (res as http.ServerResponse).writeHead(status, { "content-type": "application/json", "content-length": json.length });
  res.end(json);
}

function listen(server: http.Server | http2.Http2Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

const h1 = http.createServer({ keepAliveTimeout: 65_000 }, handle);
const h2 = http2.createServer({}, handle);
const ports = { http1: await listen(h1), http2: await listen(h2) };
process.stdout.write(JSON.stringify(ports) + "\n");

const stop = () => {
  h1.closeAllConnections();
  h1.close();
  h2.close();
  void pool.end().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
