/**
 * npm run bench:actions — what a request execution costs a call: CreateTarget over REST
 * (HTTP/1.1, CONNECTIONS connections) without an execution, then with a request execution
 * of one synchronous webhook target on 127.0.0.1, alternated twice, all in one run against
 * one service process, one receiver process and one fresh PostgreSQL database. The ratio of
 * the rates is the figure; absolute rates are for context only (the machine is shared).
 */
import { join } from "node:path";
import { createBenchDatabase } from "../database.js";
import { closeIdleSockets, requestJson, type Created } from "../http-json.js";
import { loadHttp1, type Http1Request } from "../load-http1.js";
import type { Measurement } from "../measure.js";
import { cleanupStack, freePort, processCpuMs, startNode, waitFor } from "../processes.js";
import { CONNECTIONS, DATABASE_URL, MEASURE_SECONDS, ROOT, WARMUP_SECONDS } from "../settings.js";
import { startService, type ServiceUnderTest } from "../service.js";

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const METHOD = "/platform.resources.action.v3alpha.PlatformActions/CreateTarget";

async function run(label: string, service: ServiceUnderTest, request: Http1Request): Promise<Measurement & { cpuUs?: number }> {
  await loadHttp1(service.port, request, WARMUP_SECONDS);
  const cpu = processCpuMs(service.pid);
  const result = await loadHttp1(service.port, request, MEASURE_SECONDS);
  const used = processCpuMs(service.pid);
  const cpuUs = cpu !== undefined && used !== undefined && result.ok > 0 ? ((used - cpu) * 1000) / result.ok : undefined;
  log(
    `${label}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ${result.errors} errors${cpuUs === undefined ? "" : `, service CPU ${cpuUs.toFixed(0)} µs/call`}`,
  );
  if (result.errors > 0) throw new Error(`${label}: ${result.errors} calls failed`);
  return { ...result, ...(cpuUs !== undefined && { cpuUs }) };
}

async function main() {
  const { cleanups, cleanup } = cleanupStack(log);
  try {
    const db = await createBenchDatabase(DATABASE_URL);
    cleanups.push(() => db.drop());
    const receiverPort = await freePort();
    const receiver = startNode(join(ROOT, "dist/bench/actions/receiver.js"), { ...process.env, RECEIVER_PORT: String(receiverPort) });
    cleanups.push(() => receiver.stop());
    receiver.process.stdout!.resume();
    await waitFor(receiver, "receiver", async () => (await requestJson(receiverPort, "GET", "/count")).status === 200);
    const service = await startService(db.url, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true" });
    cleanups.push(() => service.stop());
    const headers = { ...service.headers, "content-type": "application/json" };
    const call = (method: "POST" | "DELETE", path: string, body?: unknown) =>
      requestJson(service.port, method, path, { headers: service.headers, ...(body !== undefined && { body }) });

    const made = await call("POST", "/resources/v3alpha/targets", {
      name: "bench-receiver",
      restWebhook: { url: `http://127.0.0.1:${receiverPort}/hook` },
      timeout: "5s",
    });
    if (made.status !== 201 && made.status !== 200) throw new Error(`CreateTarget: ${made.status} ${JSON.stringify(made.body)}`);
    const targetId = (made.body as Created).details.id;
    // Names must be unique across runs: each load run counts its calls from 0 again.
    let created = 0;
    const createTarget: Http1Request = () => ({
      method: "POST",
      path: "/resources/v3alpha/targets",
      headers,
      body: JSON.stringify({ name: `bench-${created++}`, restWebhook: { url: "https://hooks.example.com/x" }, timeout: "5s" }),
    });
    const attach = async () => {
      const put = await call("POST", "/resources/v3alpha/executions", { condition: { request: { method: METHOD } }, targets: [targetId] });
      if (put.status !== 200 && put.status !== 201) throw new Error(`PutExecution: ${put.status} ${JSON.stringify(put.body)}`);
    };
    const detach = async () => {
      const deleted = await call("DELETE", `/resources/v3alpha/executions/${encodeURIComponent(`request${METHOD}`)}`);
      if (deleted.status !== 200) throw new Error(`DeleteExecution: ${deleted.status} ${JSON.stringify(deleted.body)}`);
    };
    const received = async () => ((await requestJson(receiverPort, "GET", "/count")).body as { received: number }).received;

    const rows: string[] = [];
    for (let pass = 1; pass <= 2; pass++) {
      const without = await run(`pass ${pass} without an execution`, service, createTarget);
      await attach();
      const before = await received();
      const withHook = await run(`pass ${pass} with a request execution`, service, createTarget);
      const calls = (await received()) - before;
      await detach();
      // Warm-up calls hit the target too: at least one per measured call must have arrived.
      if (calls < withHook.ok) throw new Error(`the target saw ${calls} calls for ${withHook.ok} measured calls`);
      rows.push(
        `| ${pass} | ${without.requestsPerSecond.toFixed(0)} | ${withHook.requestsPerSecond.toFixed(0)} | ${(withHook.requestsPerSecond / without.requestsPerSecond).toFixed(2)} | ` +
          `${without.p50Ms.toFixed(1)} / ${withHook.p50Ms.toFixed(1)} | ${without.cpuUs?.toFixed(0) ?? "?"} / ${withHook.cpuUs?.toFixed(0) ?? "?"} |`,
      );
    }
    process.stdout.write(
      [
        `CreateTarget over REST, ${CONNECTIONS} connections, ${MEASURE_SECONDS} s per run after ${WARMUP_SECONDS} s warm-up; one synchronous webhook target on 127.0.0.1.`,
        "",
        "| pass | without (req/s) | with execution (req/s) | ratio | p50 ms without / with | service CPU µs/call without / with |",
        "|---|---|---|---|---|---|",
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    closeIdleSockets();
    await cleanup();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
