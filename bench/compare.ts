/**
 * This checkout against another, side by side: for changes smaller than a two-CPU machine's
 * noise between runs (±15–40 % here), which `npm run bench` run twice cannot tell apart.
 *
 * Both services run at once, each on a database of its own seeded alike; each round measures
 * one scenario and protocol on one side, then on the other (the first side alternating), so
 * that whatever else the machine does falls on both. Reported per side: service CPU per call
 * (the serving process, from /proc), lowest and median of the rounds, and the median req/s.
 * Noise only adds CPU, so the lowest of several rounds is the steadier figure.
 *
 *   (cd ../before && git checkout <rev> && npm ci && npm run build && npx tsc -p tsconfig.bench.json)
 *   BENCH_COMPARE_WITH=../before npm run bench:compare
 *
 * Knobs: BENCH_COMPARE_WITH (the other checkout, built; required), BENCH_COMPARE_ROUNDS (6 per
 * side), BENCH_SECONDS (each round, default 5), BENCH_SCENARIOS (GetTarget unless set),
 * BENCH_PROTOCOLS (rest, connect, grpc), BENCH_DATABASE_URL. 64 calls in flight, as `npm run bench`.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import os from "node:os";
import { analyze, createBenchDatabase, type BenchDatabase } from "./database.js";
import { loadHttp1 } from "./load-http1.js";
import { loadHttp2 } from "./load-http2.js";
import { median, type Measurement } from "./measure.js";
import { cleanupStack, processCpuMs } from "./processes.js";
import { machineLine } from "./report.js";
import { scenarios, type Scenario } from "./scenarios.js";
import { seedScenarios, type ServiceUnderTest } from "./service.js";
import { COMPARE_ROUNDS, DATABASE_URL, MEASURE_SECONDS, ONLY_PROTOCOLS, ONLY_SCENARIOS, WARMUP_SECONDS } from "./settings.js";

const log = (line: string) => process.stderr.write(`bench:compare: ${line}\n`);

const OTHER = process.env.BENCH_COMPARE_WITH;
const SCENARIOS = ONLY_SCENARIOS.length > 0 ? ONLY_SCENARIOS : ["GetTarget"];
const PROTOCOLS = (ONLY_PROTOCOLS.length > 0 ? ONLY_PROTOCOLS : ["rest", "connect", "grpc"]) as Array<"rest" | "connect" | "grpc">;

interface Side {
  label: string;
  service: ServiceUnderTest;
  database: BenchDatabase;
  scenarios: Scenario[];
  cpuUs: Map<string, number[]>;
  rates: Map<string, number[]>;
}

/** A service of `root` (a checkout's top folder), started by that checkout's own bench code. */
async function startSide(label: string, root: string): Promise<Side> {
  const { startService } = (await import(pathToFileURL(resolve(root, "dist/bench/service.js")).href)) as typeof import("./service.js");
  const database = await createBenchDatabase(DATABASE_URL);
  const service = await startService(database.url).catch(async (error: unknown) => {
    await database.drop();
    throw error;
  });
  const seeded = await seedScenarios(service, SCENARIOS);
  await analyze(database.url);
  return { label, service, database, scenarios: scenarios(seeded), cpuUs: new Map(), rates: new Map() };
}

/** `opened`: called as the measured window opens (load-http1.ts: once every connection was answered). */
function load(side: Side, name: string, protocol: "rest" | "connect" | "grpc", seconds: number, opened?: () => void): Promise<Measurement> {
  const scenario = side.scenarios.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  const { port, headers } = side.service;
  return protocol === "grpc"
    ? loadHttp2(port, scenario.grpc, seconds, headers.host, undefined, 1, opened)
    : loadHttp1(port, scenario[protocol], seconds, undefined, opened);
}

async function round(side: Side, name: string, protocol: "rest" | "connect" | "grpc"): Promise<void> {
  let before = processCpuMs(side.service.pid);
  const m = await load(side, name, protocol, MEASURE_SECONDS, () => (before = processCpuMs(side.service.pid)));
  const after = processCpuMs(side.service.pid);
  if (m.errors > 0) throw new Error(`${side.label} ${name} ${protocol}: ${m.errors} calls failed`);
  const key = `${name} ${protocol}`;
  if (before !== undefined && after !== undefined && m.ok > 0) push(side.cpuUs, key, ((after - before) * 1000) / m.ok);
  push(side.rates, key, m.requestsPerSecond);
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}

const middle = (values: number[]) => median(values)!;
const lowest = (values: number[]) => Math.min(...values);

async function main(): Promise<void> {
  if (!OTHER) throw new Error("BENCH_COMPARE_WITH must name the other checkout (built with npm run build && npx tsc -p tsconfig.bench.json)");
  const { cleanups, cleanup } = cleanupStack(log);
  try {
    const loadAtStart = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
    log(`starting and seeding this checkout and ${OTHER}…`);
    const here = await startSide("this checkout", resolve("."));
    cleanups.push(async () => {
      await here.service.stop();
      await here.database.drop();
    });
    const other = await startSide(OTHER, resolve(OTHER));
    cleanups.push(async () => {
      await other.service.stop();
      await other.database.drop();
    });
    for (const name of SCENARIOS) {
      for (const protocol of PROTOCOLS) {
        log(`${name} ${protocol}: warm-up, then ${COMPARE_ROUNDS} rounds per side…`);
        await load(here, name, protocol, WARMUP_SECONDS);
        await load(other, name, protocol, WARMUP_SECONDS);
        for (let r = 0; r < COMPARE_ROUNDS; r++) {
          const [first, second] = r % 2 ? [other, here] : [here, other];
          await round(first, name, protocol);
          await round(second, name, protocol);
        }
      }
    }
    const rows = [...here.cpuUs.keys()].map((key) => {
      const a = here.cpuUs.get(key)!;
      const b = other.cpuUs.get(key) ?? [];
      return `| ${key} | ${lowest(a).toFixed(0)} / ${middle(a).toFixed(0)} | ${lowest(b).toFixed(0)} / ${middle(b).toFixed(0)} | ${(middle(a) / middle(b)).toFixed(2)} | ${middle(here.rates.get(key)!).toFixed(0)} | ${middle(other.rates.get(key)!).toFixed(0)} |`;
    });
    process.stdout.write(
      [
        "# This checkout against another",
        "",
        `${machineLine()} at the end, ${loadAtStart} at the start. Other: ${OTHER}. ${COMPARE_ROUNDS} rounds of ${MEASURE_SECONDS} s per side, alternating, 64 in flight.`,
        "",
        "| scenario, protocol | this: CPU µs/call lowest / median | other: lowest / median | CPU this ÷ other (medians) | this: req/s (median) | other: req/s |",
        "|---|---|---|---|---|---|",
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    await cleanup();
  }
}

await main();
