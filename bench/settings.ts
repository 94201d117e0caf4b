/** Knobs of one benchmark run; every load targets 127.0.0.1 only. */
import { fileURLToPath } from "node:url";

function seconds(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 1 || value > 120) {
    throw new Error(`BENCH_SECONDS must be a number from 1 to 120, not "${raw}"`);
  }
  return value;
}

export const HOST = "127.0.0.1";
/** Concurrent HTTP/1.1 connections, or concurrent calls on one HTTP/2 connection. */
export const CONNECTIONS = 64;
export const WARMUP_SECONDS = 2;
export const MEASURE_SECONDS = seconds(process.env.BENCH_SECONDS, 5);
/** HTTP/1.1: how long the connections may take to have their first answers before the measured window (load-http1.ts); past it the run fails. */
export const RAMP_MAX_SECONDS = 60;
/** Both the service and the baseline use a pg pool of this size. */
export const POOL_SIZE = 20;
export const SEED_TARGETS = 200;
/** Human users with a password, seeded for GetUser. */
export const SEED_USERS = 200;
export const SEARCH_LIMIT = 100;
/** Organizations besides the default one; SearchIDPs and ResolveLanguages ask in the first. */
export const SEED_ORGS = 10;
/** Identity providers: half the instance's, the other half spread over the organizations. */
export const SEED_IDPS = 1000;
/** Of the instance's providers, how many the asked organization switches off for itself. */
export const SEED_IDP_POLICIES = 100;
/** Only these scenarios (comma-separated names, e.g. "SearchIDPs,ResolveLanguages"); empty: all. */
export const ONLY_SCENARIOS = (process.env.BENCH_SCENARIOS ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
/**
 * BENCH_CPU_PROFILE=<dir>: the service runs with `--cpu-prof` and writes its profile there when
 * it stops, the baseline in its `baseline` folder (summarize one with `node dist/bench/profile-summary.js <file>`). The profiler costs
 * the service some throughput: profile runs show where time goes, not the figures to report.
 */
export const PROFILE_DIR = process.env.BENCH_CPU_PROFILE || undefined;
/** Only these protocols (comma-separated: rest, connect, grpc); empty: all three. */
export const ONLY_PROTOCOLS = (process.env.BENCH_PROTOCOLS ?? "")
  .split(",")
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
for (const p of ONLY_PROTOCOLS) if (!["rest", "connect", "grpc"].includes(p)) throw new Error(`BENCH_PROTOCOLS: "${p}" is none of rest, connect, grpc`);
/**
 * GetTarget's concurrency sweep: BENCH_SWEEP, the concurrent requests of each step
 * (comma-separated), "off" for none. Each step runs every chosen protocol and its baseline.
 */
export const SWEEP = sweep(process.env.BENCH_SWEEP);
/**
 * BENCH_ROUNDS: each scenario measured this many times, the baseline and the service
 * alternating, and reported as the medians: rows of one run differ by about ±0.1 on a
 * two-CPU machine, more than many a change being judged.
 */
export const ROUNDS = integerSetting("BENCH_ROUNDS", process.env.BENCH_ROUNDS, 1, 1, 10);
/** `npm run bench:compare`: rounds per side (bench/compare.ts). */
export const COMPARE_ROUNDS = integerSetting("BENCH_COMPARE_ROUNDS", process.env.BENCH_COMPARE_ROUNDS, 6, 1, 100);
/** GetTarget with this many workers (PLATFORM_WORKERS) against one, back to back; BENCH_SCALE_WORKERS=0 skips it. */
export const SCALE_WORKERS = integerSetting("BENCH_SCALE_WORKERS", process.env.BENCH_SCALE_WORKERS, 2, 0, 16);

function sweep(raw: string | undefined): number[] {
  if (raw === undefined || raw === "") return [1, 16, 64, 256];
  if (raw === "off") return [];
  return raw.split(",").map((part) => integerSetting("BENCH_SWEEP", part.trim(), 0, 1, 1024));
}

function integerSetting(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name}: "${raw}" is not a whole number from ${min} to ${max}`);
  return value;
}
export const DATABASE_URL = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
/** 32 characters, as the service requires with DATABASE_URL. */
export const MASTER_KEY = "bench-masterkey-0123456789abcdef";
/**
 * Argon2id cost of new password hashes: the service's defaults (PLATFORM_PASSWORD_ARGON2_*),
 * passed to the service explicitly and used by the baseline, so that both hash alike.
 */
export const ARGON2 = { memoryKiB: 19_456, iterations: 2, parallelism: 1 } as const;
/** Meets the default password policy: 8 characters or more, upper and lower case, a digit, a symbol. */
export const USER_PASSWORD = "Bench-Passw0rd!";
/** Gives up on a single request after this long; the runs stay bounded. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** The checkout: this file runs as dist/bench/settings.js. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A whole-number knob from the environment, within its bounds, or its default. */
export function wholeNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return value;
}
