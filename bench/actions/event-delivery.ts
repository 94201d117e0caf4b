/**
 * Event delivery throughput (issue 10, section 6): events/s that event executions deliver
 * to a local receiver with one and with two service processes on one PostgreSQL, as a
 * ratio to a baseline measured in the same run: the rate at which the same receiver takes
 * signed POSTs of the same body from a plain loop with as many calls in flight as the
 * processes' workers have (PLATFORM_ACTIONS_DELIVERY_CONCURRENCY each).
 *
 * The backlog is built while the workers are asleep (a poll interval of an hour), the
 * service is stopped, and the clock runs from the first delivery the restarted processes
 * make to the last: what is measured is draining the outbox, not creating users.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { signatureHeader } from "../../src/engines/actions/signature.js";
import { createBenchDatabase } from "../database.js";
import type { Created } from "../http-json.js";
import { DATABASE_URL, HOST } from "../settings.js";
import { callApi as call, startPeer, startService, type ServiceUnderTest } from "../service.js";

const EVENTS = Number(process.env.BENCH_EVENTS || 3000);
const CONCURRENCY = Number(process.env.BENCH_DELIVERY_CONCURRENCY || 10);
const BASELINE_SECONDS = 5;

/** Counts the POSTs it gets; answers 200 with an empty object, as a receiver that ignores nothing would. */
function startReceiver(): Promise<{ url: string; count: () => number; times: number[]; close(): void }> {
  const times: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      times.push(performance.now());
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, HOST, () =>
      resolve({
        url: `http://${HOST}:${(server.address() as AddressInfo).port}`,
        count: () => times.length,
        times,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

/** The body a delivery of user.machine.added carries, signed the same way. */
const SAMPLE_BODY = JSON.stringify({
  aggregateID: "0190c0de-0000-7000-8000-000000000000",
  aggregateType: "user",
  resourceOwner: "0190c0de-0000-7000-8000-000000000001",
  instanceID: "0190c0de-0000-7000-8000-000000000002",
  version: "v1",
  sequence: 1,
  event_type: "user.machine.added",
  created_at: new Date().toISOString(),
  userID: "0190c0de-0000-7000-8000-000000000003",
  event_payload: {
    orgId: "0190c0de-0000-7000-8000-000000000001",
    username: "bench-user-1",
    name: "svc",
    description: "",
    accessTokenType: "ACCESS_TOKEN_TYPE_BEARER",
  },
});

/** A plain loop: `inFlight` signed POSTs at a time over kept-alive connections, for `seconds`. */
async function baseline(url: string, inFlight: number, seconds: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const target = new URL(url);
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: "POST",
          path: "/baseline",
          agent,
          headers: { "content-type": "application/json", "platform-signature": signatureHeader(SAMPLE_BODY, ["k".repeat(32)]) },
        },
        (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on("error", reject);
      req.end(SAMPLE_BODY);
    });
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        await post();
        done++;
      }
    }),
  );
  agent.destroy();
  return done / seconds;
}

const asleep = { PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "1h" };
const awake = { PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "50ms", PLATFORM_ACTIONS_DELIVERY_CONCURRENCY: String(CONCURRENCY) };
const common = { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true" };

/** `EVENTS` machine users, eight at a time: one user.machine.added each, one delivery each. */
async function backlog(port: number, headers: ServiceUnderTest["headers"], tag: string): Promise<void> {
  for (let start = 0; start < EVENTS; start += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, EVENTS - start) }, (_, i) =>
        call(port, headers, "POST", "/resources/v3alpha/users", { username: `bench-${tag}-${start + i}`, machine: { name: "svc" } }, 201),
      ),
    );
  }
}

async function drain(
  processes: number,
  databaseUrl: string,
  headers: ServiceUnderTest["headers"],
  receiver: Awaited<ReturnType<typeof startReceiver>>,
): Promise<number> {
  const seeding = await startPeer(databaseUrl, { ...common, ...asleep });
  await backlog(seeding.port, headers, `p${processes}`);
  await seeding.stop();
  const before = receiver.count();
  const services = await Promise.all(Array.from({ length: processes }, () => startPeer(databaseUrl, { ...common, ...awake })));
  const deadline = Date.now() + 300_000;
  while (receiver.count() < before + EVENTS) {
    if (Date.now() > deadline) throw new Error(`only ${receiver.count() - before} of ${EVENTS} events delivered`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await Promise.all(services.map((s) => s.stop()));
  const times = receiver.times.slice(before, before + EVENTS);
  return (EVENTS - 1) / ((times.at(-1)! - times[0]!) / 1000);
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const database = await createBenchDatabase(DATABASE_URL);
  try {
    const first = await startService(database.url, { ...common, ...asleep });
    const headers = first.headers;
    const target = (await call(
      first.port,
      headers,
      "POST",
      "/resources/v3alpha/targets",
      { name: "bench-receiver", restWebhook: { url: `${receiver.url}/events` }, timeout: "10s" },
      201,
    )) as Created;
    await call(first.port, headers, "POST", "/resources/v3alpha/executions", { condition: { event: { group: "user" } }, targets: [target.details.id] }, 201);
    await first.stop();

    const rows: string[] = [];
    for (const processes of [1, 2]) {
      process.stderr.write(`baseline, ${processes * CONCURRENCY} in flight…\n`);
      const base = await baseline(receiver.url, processes * CONCURRENCY, BASELINE_SECONDS);
      process.stderr.write(`${processes} process(es), ${EVENTS} events…\n`);
      const rate = await drain(processes, database.url, headers, receiver);
      rows.push(`| ${processes} | ${processes * CONCURRENCY} | ${Math.round(rate)} | ${Math.round(base)} | ${(rate / base).toFixed(3)} |`);
    }
    const table = [
      `Event delivery, ${EVENTS} user.machine.added events per run, PostgreSQL, receiver on ${HOST}:`,
      "",
      "| processes | calls in flight | delivered events/s | baseline signed POSTs/s | ratio |",
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n");
    process.stdout.write(`${table}\n`);
  } finally {
    receiver.close();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
