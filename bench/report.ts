import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import type { Measurement } from "./measure.js";
import { CONNECTIONS, MEASURE_SECONDS, ROOT, ROUNDS, WARMUP_SECONDS } from "./settings.js";

export interface Row {
  scenario: string;
  protocol: string;
  result: Measurement;
  /** The matching baseline run; undefined on the baseline's own rows. */
  baseline: Measurement | undefined;
}

/** Issue 21's aims, one worker: at least 0.7 of the baseline's throughput, a p99 at most twice the baseline's. */
export const TARGET_THROUGHPUT_RATIO = 0.7;
export const TARGET_P99_RATIO = 2;

const fixed = (value: number, digits: number) => value.toFixed(digits);
const ratio = (a: number, b: number) => (b > 0 ? fixed(a / b, 2) : "n/a");

function meetsTargets(row: Row): string {
  if (!row.baseline) return "";
  const ok =
    row.result.requestsPerSecond >= TARGET_THROUGHPUT_RATIO * row.baseline.requestsPerSecond && row.result.p99Ms <= TARGET_P99_RATIO * row.baseline.p99Ms;
  return ok ? "yes" : "no";
}

export function markdownTable(rows: Row[]): string {
  const lines = [
    "| Scenario | Protocol | req/s | p50 ms | p99 ms | throughput ratio | p99 ratio | errors | load-gen CPU | server CPU µs/req | ramp ms | meets targets |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
  ];
  for (const row of rows) {
    const { result: r, baseline: b } = row;
    lines.push(
      `| ${row.scenario} | ${row.protocol} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ` +
        `${b ? ratio(r.requestsPerSecond, b.requestsPerSecond) : "(baseline)"} | ${b ? ratio(r.p99Ms, b.p99Ms) : ""} | ` +
        `${r.errors} | ${r.loadGeneratorCpu === undefined ? "" : fixed(r.loadGeneratorCpu, 2)} | ${r.serverCpuUs === undefined ? "" : fixed(r.serverCpuUs, 0)} | ` +
        `${r.rampMs === undefined ? "" : fixed(r.rampMs, 0)} | ${meetsTargets(row)} |`,
    );
  }
  return lines.join("\n");
}

export function machineLine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${os.availableParallelism()} CPUs (${cpu}), Node ${process.version}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`;
}

/** A further table of the run (the concurrency sweep, the workers' scaling), under its own heading. */
export interface Section {
  title: string;
  intro: string;
  rows: Row[];
}

/** `notes`: lines about the run printed under the header, such as the cost of one password hash. */
export function report(rows: Row[], machine: string, notes: string[] = [], sections: Section[] = []): string {
  return [
    "# Benchmark results",
    "",
    `${machine}. ${CONNECTIONS} concurrent requests, ${WARMUP_SECONDS} s warm-up, ${MEASURE_SECONDS} s measured per row` +
      (ROUNDS > 1 ? `; the main table's figures are medians of ${ROUNDS} rounds, baseline and service alternating (BENCH_ROUNDS).` : "."),
    "Throughput ratio = req/s ÷ baseline req/s; p99 ratio = p99 ÷ baseline p99. REST and Connect are compared with the",
    `HTTP/1.1 baseline, gRPC with the HTTP/2 baseline. Targets: throughput ratio ≥ ${TARGET_THROUGHPUT_RATIO}, p99 ratio ≤ ${TARGET_P99_RATIO}.`,
    "Load-gen CPU: cores the load generator itself used during the measured run (near 1.0 = it was the bottleneck).",
    "Server CPU µs/req: CPU time of the serving process (all its threads, from /proc) per successful request of the measured run.",
    `Ramp ms (HTTP/1.1): from opening the ${CONNECTIONS} connections until each had its first answer; the measured run starts there, as HTTP/2's starts on a connected session.`,
    "(A busy Node server accepts one connection per turn of its event loop, so the ramp grows with the CPU a request costs.)",
    ...notes,
    "",
    markdownTable(rows),
    "",
    ...sections
      .filter((section) => section.rows.length > 0)
      .flatMap((section) => [`## ${section.title}`, "", section.intro, "", markdownTable(section.rows), ""]),
  ].join("\n");
}

/** Writes bench/results/latest.md; returns its path. */
export async function writeReport(text: string): Promise<string> {
  const dir = join(ROOT, "bench", "results");
  await mkdir(dir, { recursive: true });
  const path = join(dir, "latest.md");
  await writeFile(path, text);
  return path;
}
