/**
 * npm run bench: the service under test and the baseline as child processes on one fresh
 * PostgreSQL database, each scenario over REST, Connect JSON and gRPC, and a Markdown table.
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { createPasswordHasher } from "../src/crypto/passwords.js";
import { startBaseline, type Baseline } from "./baseline.js";
import { analyze, createBenchDatabase, firstInstanceId, type BenchDatabase } from "./database.js";
import { closeIdleSockets, requestJson } from "./http-json.js";
import { loadHttp1, type Http1Request } from "./load-http1.js";
import { loadHttp2 } from "./load-http2.js";
import { median, type Measurement } from "./measure.js";
import { cleanupStack, processTreeCpuMs } from "./processes.js";
import { machineLine, report, writeReport, type Row, type Section } from "./report.js";
import { scenarios, type Scenario } from "./scenarios.js";
import { seedScenarios, startPeer, startService, type ServiceUnderTest } from "./service.js";
import {
  ARGON2,
  CONNECTIONS,
  DATABASE_URL,
  ROUNDS,
  SCALE_WORKERS,
  SWEEP,
  MEASURE_SECONDS,
  ONLY_PROTOCOLS,
  ONLY_SCENARIOS,
  SEED_IDPS,
  SEED_ORGS,
  USER_PASSWORD,
  WARMUP_SECONDS,
} from "./settings.js";

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

/**
 * A warm-up run whose numbers are dropped, then the measured run; `serverPid`: the process
 * under load (with its children: a service of several workers).
 */
async function measure(
  label: string,
  serverPid: number | undefined,
  load: (seconds: number, opened?: () => void) => Promise<Measurement>,
): Promise<Measurement> {
  await load(WARMUP_SECONDS);
  // Read as the measured window opens: an HTTP/1.1 load's connections are answered first.
  let cpu = process.cpuUsage();
  let serverCpu = processTreeCpuMs(serverPid);
  let started = performance.now();
  const result = await load(MEASURE_SECONDS, () => {
    cpu = process.cpuUsage();
    serverCpu = processTreeCpuMs(serverPid);
    started = performance.now();
  });
  const used = process.cpuUsage(cpu);
  const serverUsed = processTreeCpuMs(serverPid);
  result.loadGeneratorCpu = (used.user + used.system) / 1000 / (performance.now() - started);
  if (serverCpu !== undefined && serverUsed !== undefined && result.ok > 0) result.serverCpuUs = ((serverUsed - serverCpu) * 1000) / result.ok;
  log(
    `${label}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ` +
      `${result.errors} errors, load generator CPU ${result.loadGeneratorCpu.toFixed(2)}` +
      (result.serverCpuUs === undefined ? "" : `, server CPU ${result.serverCpuUs.toFixed(0)} µs/request`) +
      (result.rampMs === undefined ? "" : `, connections answered after ${result.rampMs.toFixed(0)} ms`),
  );
  return result;
}

/**
 * What bounds CreateUser: one Argon2id hash with the run's parameters, timed in this process
 * before any load: 20 in a row (one libuv thread), then CONNECTIONS at once (the whole pool).
 */
async function argon2Cost(): Promise<string> {
  const hasher = createPasswordHasher(ARGON2);
  await hasher.hash(USER_PASSWORD);
  let started = performance.now();
  for (let i = 0; i < 20; i++) await hasher.hash(USER_PASSWORD);
  const oneMs = (performance.now() - started) / 20;
  started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, () => hasher.hash(USER_PASSWORD)));
  const perSecond = CONNECTIONS / ((performance.now() - started) / 1000);
  const pool = process.env.UV_THREADPOOL_SIZE ? `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}` : "UV_THREADPOOL_SIZE unset: 4 threads";
  return (
    `Argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations}, p=${ARGON2.parallelism} (service and baseline): ${oneMs.toFixed(1)} ms per hash ` +
    `(mean of 20 in a row), ${perSecond.toFixed(0)} hashes/s with ${CONNECTIONS} at once on the libuv threadpool (${pool}), measured before the load.`
  );
}

/** One call of each HTTP/1.1 variant first, so that a broken request fails loudly, not as a column of errors. */
async function smokeTest(port: number, label: string, request: Http1Request): Promise<unknown> {
  const { method, path, headers, body } = request(0);
  const res = await requestJson(port, method, path, { headers, ...(body !== undefined && { body: JSON.parse(body) }) });
  if (res.status < 200 || res.status > 299) throw new Error(`${label}: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * JSON with sorted keys and instants in one form: the same answer whatever order the fields
 * were written in, and whether a whole second is written `…:20Z` (protobuf's JSON) or
 * `…:20.000Z` (the baseline's Date).
 */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : typeof v === "string" && RFC3339.test(v)
        ? new Date(v).toISOString()
        : v,
  );

async function runScenario(s: Scenario, service: ServiceUnderTest, baseline: Baseline): Promise<Row[]> {
  const rest = await smokeTest(service.port, `${s.name} REST`, s.rest);
  await smokeTest(service.port, `${s.name} Connect`, s.connect);
  const bare = await smokeTest(baseline.http1Port, `${s.name} baseline`, s.baselineHttp1);
  // A read must cost the baseline the same answer, or the ratio compares different work.
  if (s.sameAnswer && canonical(rest) !== canonical(bare)) {
    throw new Error(`${s.name}: the baseline answers differently from the service\nservice:  ${canonical(rest)}\nbaseline: ${canonical(bare)}`);
  }
  const grpcSmoke = await loadHttp2(service.port, s.grpc, 0.2, service.headers.host);
  if (grpcSmoke.errors > 0) throw new Error(`${s.name} gRPC: the smoke test failed`);

  const rounds: Row[][] = [];
  for (let round = 1; round <= ROUNDS; round++) rounds.push(await measureScenario(s, service, baseline, { round: ROUNDS > 1 ? ` (round ${round})` : "" }));
  return medianRows(rounds);
}

/**
 * One round of a scenario: each chosen protocol right after its baseline, with `concurrency`
 * requests in flight (CONNECTIONS unless told); rows named `name` (the scenario's unless told).
 */
async function measureScenario(
  s: Scenario,
  service: ServiceUnderTest,
  baseline: Baseline,
  opts: { name?: string; concurrency?: number; round?: string },
): Promise<Row[]> {
  const { name = s.name, concurrency = CONNECTIONS, round = "" } = opts;
  const wants = wantsProtocol;
  const rows: Row[] = [];
  if (wants("rest") || wants("connect")) {
    const h1 = await measure(`${name} baseline HTTP/1.1${round}`, baseline.pid, (sec, opened) =>
      loadHttp1(baseline.http1Port, s.baselineHttp1, sec, concurrency, opened),
    );
    if (wants("rest")) {
      const result = await measure(`${name} REST${round}`, service.pid, (sec, opened) => loadHttp1(service.port, s.rest, sec, concurrency, opened));
      rows.push({ scenario: name, protocol: "REST (HTTP/1.1)", result, baseline: h1 });
    }
    if (wants("connect")) {
      const result = await measure(`${name} Connect${round}`, service.pid, (sec, opened) => loadHttp1(service.port, s.connect, sec, concurrency, opened));
      rows.push({ scenario: name, protocol: "Connect JSON (HTTP/1.1)", result, baseline: h1 });
    }
    rows.push({ scenario: name, protocol: "baseline HTTP/1.1", result: h1, baseline: undefined });
  }
  if (wants("grpc")) {
    const h2 = await measure(`${name} baseline HTTP/2${round}`, baseline.pid, (sec, opened) =>
      loadHttp2(baseline.http2Port, s.baselineHttp2, sec, undefined, concurrency, 1, opened),
    );
    const result = await measure(`${name} gRPC${round}`, service.pid, (sec, opened) =>
      loadHttp2(service.port, s.grpc, sec, service.headers.host, concurrency, 1, opened),
    );
    rows.push(
      { scenario: name, protocol: "gRPC (HTTP/2)", result, baseline: h2 },
      { scenario: name, protocol: "baseline HTTP/2", result: h2, baseline: undefined },
    );
  }
  return rows;
}

/**
 * Rounds of one scenario as one table: each figure the median of its rounds (the ratio then
 * compares the medians), errors summed. Rows line up by position: every round measures the
 * same protocols in the same order.
 */
function medianRows(rounds: Row[][]): Row[] {
  if (rounds.length === 1) return rounds[0]!;
  const merge = (ms: Measurement[]): Measurement => {
    const merged: Measurement = {
      requestsPerSecond: median(ms.map((m) => m.requestsPerSecond))!,
      p50Ms: median(ms.map((m) => m.p50Ms))!,
      p99Ms: median(ms.map((m) => m.p99Ms))!,
      ok: ms.reduce((sum, m) => sum + m.ok, 0),
      errors: ms.reduce((sum, m) => sum + m.errors, 0),
    };
    const cpu = median(ms.map((m) => m.loadGeneratorCpu));
    const server = median(ms.map((m) => m.serverCpuUs));
    const ramp = median(ms.map((m) => m.rampMs));
    return {
      ...merged,
      ...(cpu !== undefined && { loadGeneratorCpu: cpu }),
      ...(server !== undefined && { serverCpuUs: server }),
      ...(ramp !== undefined && { rampMs: ramp }),
    };
  };
  return rounds[0]!.map((row, i) => {
    const all = rounds.map((r) => r[i]!);
    return { ...row, result: merge(all.map((r) => r.result)), baseline: row.baseline && merge(all.map((r) => r.baseline!)) };
  });
}

const wantsProtocol = (protocol: string) => ONLY_PROTOCOLS.length === 0 || ONLY_PROTOCOLS.includes(protocol);

/**
 * GetTarget at each concurrency of the sweep: every chosen protocol beside its baseline at the
 * same concurrency, so that no concurrency from one caller to many hides a regression.
 */
async function concurrencySweep(s: Scenario, service: ServiceUnderTest, baseline: Baseline): Promise<Row[]> {
  const rows: Row[] = [];
  for (const concurrency of SWEEP) rows.push(...(await measureScenario(s, service, baseline, { name: `${s.name} × ${concurrency}`, concurrency })));
  return rows;
}

/**
 * GetTarget on a service of SCALE_WORKERS workers against the one-worker service, back to back
 * on the same database: the ratio is what the further workers add (ideal: their number).
 */
async function workerScaling(s: Scenario, service: ServiceUnderTest, databaseUrl: string): Promise<Row[]> {
  const scaled = await startPeer(databaseUrl, { PLATFORM_WORKERS: String(SCALE_WORKERS) });
  try {
    const rows: Row[] = [];
    const name = `${s.name}, ${SCALE_WORKERS} workers`;
    if (wantsProtocol("rest")) {
      const one = await measure(`${s.name} REST, 1 worker`, service.pid, (sec, opened) => loadHttp1(service.port, s.rest, sec, CONNECTIONS, opened));
      const many = await measure(`${name} REST`, scaled.pid, (sec, opened) => loadHttp1(scaled.port, s.rest, sec, CONNECTIONS, opened));
      rows.push(
        { scenario: name, protocol: "REST (HTTP/1.1)", result: many, baseline: one },
        { scenario: `${s.name}, 1 worker`, protocol: "REST (HTTP/1.1)", result: one, baseline: undefined },
      );
    }
    if (wantsProtocol("grpc")) {
      // Several connections, or one worker would serve them all: a connection stays with the worker that accepted it.
      const sessions = 2 * SCALE_WORKERS;
      const one = await measure(`${s.name} gRPC, 1 worker`, service.pid, (sec, opened) =>
        loadHttp2(service.port, s.grpc, sec, service.headers.host, CONNECTIONS, sessions, opened),
      );
      const many = await measure(`${name} gRPC`, scaled.pid, (sec, opened) =>
        loadHttp2(scaled.port, s.grpc, sec, service.headers.host, CONNECTIONS, sessions, opened),
      );
      rows.push(
        { scenario: name, protocol: "gRPC (HTTP/2)", result: many, baseline: one },
        { scenario: `${s.name}, 1 worker`, protocol: "gRPC (HTTP/2)", result: one, baseline: undefined },
      );
    }
    return rows;
  } finally {
    await scaled.stop();
  }
}

async function main(): Promise<number> {
  const machine = machineLine();
  const { cleanups, cleanup } = cleanupStack(log);
  try {
    const argon2 = await argon2Cost();
    log(argon2);
    const database: BenchDatabase = await createBenchDatabase(DATABASE_URL);
    cleanups.push(() => database.drop());
    log(`database ${database.name}`);

    const service = await startService(database.url);
    cleanups.push(() => service.stop());
    const seeded = await seedScenarios(service, ONLY_SCENARIOS);
    const { ids, userIds, orgId } = seeded;
    const instanceId = await firstInstanceId(database.url);
    await analyze(database.url);
    log(
      `service on port ${service.port}, instance ${instanceId}, ${ids.length} targets, ${userIds.length} users, ` +
        (orgId ? `${SEED_ORGS} organizations and ${SEED_IDPS} identity providers seeded` : "no organizations or providers seeded"),
    );

    const baseline = await startBaseline(database.url, instanceId);
    cleanups.push(() => baseline.stop());
    cleanups.push(() => closeIdleSockets());
    log(`baseline on ports ${baseline.http1Port} (HTTP/1.1) and ${baseline.http2Port} (HTTP/2)`);

    // Gets, then Searches, then Creates: every created target makes the search's count(*) over() larger.
    const rows: Row[] = [];
    const chosen = scenarios(seeded).filter((s) => ONLY_SCENARIOS.length === 0 || ONLY_SCENARIOS.includes(s.name));
    if (chosen.length === 0) throw new Error(`BENCH_SCENARIOS names no scenario: ${ONLY_SCENARIOS.join(", ")}`);
    for (const s of chosen) rows.push(...(await runScenario(s, service, baseline)));
    const getTarget = chosen.find((s) => s.name === "GetTarget");
    const sections: Section[] = [];
    if (getTarget && SWEEP.length > 0) {
      sections.push({
        title: "GetTarget by concurrency",
        intro: `Each protocol against its baseline at the same number of concurrent requests (${SWEEP.join(", ")}); BENCH_SWEEP sets the steps.`,
        rows: await concurrencySweep(getTarget, service, baseline),
      });
    }
    if (getTarget && SCALE_WORKERS > 1) {
      sections.push({
        title: `GetTarget with ${SCALE_WORKERS} workers`,
        intro:
          `Here the throughput ratio is ${SCALE_WORKERS} workers (PLATFORM_WORKERS) ÷ 1 worker, measured back to back; server CPU counts the primary and its workers. ` +
          `gRPC spreads its ${CONNECTIONS} streams over ${2 * SCALE_WORKERS} connections in both rows (a connection stays with one worker). The load generator, PostgreSQL and the service share the machine's ${os.availableParallelism()} CPUs.`,
        rows: await workerScaling(getTarget, service, database.url),
      });
    }

    const text = report(rows, machine, [argon2], sections);
    process.stdout.write(text);
    log(`written to ${await writeReport(text)}`);
    const errors = rows.reduce((sum, r) => sum + r.result.errors, 0);
    if (errors > 0) log(`${errors} requests failed: the numbers above are not trustworthy`);
    return errors > 0 ? 1 : 0;
  } finally {
    await cleanup();
  }
}

process.exitCode = await main();
