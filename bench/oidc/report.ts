import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Measurement } from "../measure.js";
import { CONNECTIONS, MEASURE_SECONDS, ROOT, WARMUP_SECONDS } from "../settings.js";
import { LOGIN_CONCURRENCY } from "./login.js";

/** A measured run with the CPU of its server and of PostgreSQL. */
export interface Run extends Measurement {
  /** Cores the server process used during the measured run (CPU seconds ÷ wall seconds). */
  serverCores?: number;
  /** req/s ÷ serverCores: what one fully busy core of the server would answer. */
  perCore?: number;
  /** CPU of the PostgreSQL backends of the service's database per successful request, in µs. */
  postgresCpuUs?: number;
}

export interface OidcRow {
  scenario: string;
  /** What the baseline row did. */
  compares: string;
  result: Run;
  baseline: Run;
}

const fixed = (value: number | undefined, digits: number) => (value === undefined ? "" : value.toFixed(digits));
const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? (a / b).toFixed(2) : "n/a");

function line(scenario: string, side: string, r: Run, b: Run | undefined): string {
  return (
    `| ${scenario} | ${side} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ` +
    `${b ? ratio(r.requestsPerSecond, b.requestsPerSecond) : "(baseline)"} | ${r.errors} | ${fixed(r.serverCpuUs, 0)} | ` +
    `${fixed(r.serverCores, 2)} | ${fixed(r.perCore, 0)} | ${b ? ratio(r.perCore, b.perCore) : ""} | ${fixed(r.postgresCpuUs, 0)} | ${fixed(r.loadGeneratorCpu, 2)} |`
  );
}

export function markdownTable(rows: OidcRow[]): string {
  const lines = [
    "| Scenario | Side | req/s | p50 ms | p99 ms | throughput ratio | errors | server CPU µs/req | server cores | req/s per core | per-core ratio | PostgreSQL CPU µs/req | load-gen CPU |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    lines.push(line(row.scenario, "service", row.result, row.baseline));
    lines.push(line(row.scenario, "baseline", row.baseline, undefined));
  }
  return lines.join("\n");
}

export function report(rows: OidcRow[], machine: string): string {
  const compares = [...new Map(rows.map((r) => [r.scenario, r.compares])).entries()].map(([s, c]) => `- ${s}: ${c}`);
  return [
    "# OIDC benchmark results",
    "",
    `${machine}. ${CONNECTIONS} HTTP/1.1 keep-alive connections (the password login: ${LOGIN_CONCURRENCY} concurrent sign-ins), ${WARMUP_SECONDS} s warm-up, ${MEASURE_SECONDS} s measured per row.`,
    "Service: `node dist/src/main.js`, one worker, PostgreSQL. Baseline: node-oidc-provider standalone (same version), in-memory adapter.",
    "Throughput ratio = service req/s ÷ baseline req/s. Server cores = the serving process's CPU seconds ÷ wall seconds;",
    "req/s per core = req/s ÷ server cores (= 10⁶ ÷ server CPU µs/req); per-core ratio = service per core ÷ baseline per core.",
    "PostgreSQL CPU: the backends of the service's database (its pool), per request (the baseline uses none). Load-gen CPU: cores the load generator used.",
    "Password login: req/s are whole sign-ins per second; its baseline is Argon2id verifications per second, so its per-core ratio is the share of",
    "a sign-in's service CPU that the one password verification explains (1.00: bounded by Argon2id alone).",
    "",
    markdownTable(rows),
    "",
    "What each baseline row does:",
    "",
    ...compares,
    "",
  ].join("\n");
}

/** Writes bench/results/oidc-<YYYY-MM-DD>.md (beside the main benchmark's latest.md); returns its path. */
export async function writeOidcReport(text: string): Promise<string> {
  const dir = join(ROOT, "bench", "results");
  await mkdir(dir, { recursive: true });
  const path = join(dir, `oidc-${new Date().toISOString().slice(0, 10)}.md`);
  await writeFile(path, text);
  return path;
}
