import { performance } from "node:perf_hooks";
import { createBenchDatabase } from "./database.js";
import { requestJson } from "./http-json.js";
import { machineLine, writeReport } from "./report.js";
import { startService, type ServiceUnderTest } from "./service.js";
import { DATABASE_URL } from "./settings.js";

/**
 * What the latency benches share (bench/user-search.ts, bench/console-first-page.ts): one
 * service on a fresh database, timings one after another against a baseline measured the same
 * way in the same run, and a report with the machine's line and the aim.
 */
export interface Latency {
  name: string;
  p50: number;
  p95: number;
  max: number;
}

export function latencyOf(name: string, times: number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { name, p50: at(50), p95: at(95), max: sorted[sorted.length - 1]! };
}

/** A call of a latency bench: what to send. */
export type TimedCall = { method: string; path: string; body?: unknown };

/**
 * `rounds` calls one after another after ten of warm-up; every one must answer 200. `rows`:
 * how many the last one answered (a GET one; a search its `result`, absent when empty: an
 * empty repeated field is left out of JSON).
 */
export async function timeCalls(service: ServiceUnderTest, rounds: number, name: string, call: (n: number) => TimedCall): Promise<Latency & { rows: number }> {
  const times: number[] = [];
  let rows = 0;
  for (let n = -10; n < rounds; n++) {
    const { method, path, body } = call(n);
    const started = performance.now();
    const res = await requestJson(service.port, method, path, { headers: service.headers, body });
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
    if (n >= 0) times.push(ms);
    rows = method === "GET" ? 1 : ((res.body as { result?: unknown[] }).result?.length ?? 0);
  }
  return { ...latencyOf(name, times), rows };
}

/**
 * The rows as a Markdown table, the first row the baseline; `extra`: a column more (its header
 * and each row's cell); `aimed`: the rows the aim is about (all but the baseline by default).
 */
export function latencyReport(
  title: string,
  setup: string,
  rows: Latency[],
  aimMs: number,
  digits: number,
  extra?: { header: string; cell(row: Latency, i: number): string },
  aimed = (i: number) => i > 0,
): string {
  const base = rows[0]!.p50;
  const worst = Math.max(...rows.filter((_, i) => aimed(i)).map((r) => r.p95));
  const head = ["load", ...(extra ? [extra.header] : []), "p50 ms", "p95 ms", "slowest ms", "p50 ÷ baseline"];
  return [
    `# ${title}`,
    "",
    machineLine(),
    "",
    setup,
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---|").join("")}`,
    ...rows.map(
      (r, i) =>
        `| ${[r.name, ...(extra ? [extra.cell(r, i)] : []), r.p50.toFixed(digits), r.p95.toFixed(digits), r.max.toFixed(digits), (r.p50 / base).toFixed(1)].join(" | ")} |`,
    ),
    "",
    `Aim: within ${aimMs} ms at p95${
      rows.every((_, i) => i === 0 || aimed(i))
        ? ""
        : ` for ${rows
            .filter((_, i) => aimed(i))
            .map((r) => r.name)
            .join(", ")}`
    }: ${worst <= aimMs ? "met" : "NOT met"} (worst p95 ${worst.toFixed(digits)} ms).`,
    "",
  ].join("\n");
}

/** Runs `bench` against the service on a fresh database, prints its report and writes it to bench/results/latest.md; exits 1 on failure. */
export function runLatencyBench(bench: (service: ServiceUnderTest, databaseUrl: string) => Promise<string>): void {
  const run = async () => {
    const database = await createBenchDatabase(DATABASE_URL);
    let service: ServiceUnderTest | undefined;
    try {
      service = await startService(database.url);
      const text = await bench(service, database.url);
      process.stdout.write(text);
      process.stderr.write(`written to ${await writeReport(text)}\n`);
    } finally {
      await service?.stop();
      await database.drop();
    }
  };
  run().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
