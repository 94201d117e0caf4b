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
/** Both the service and the baseline use a pg pool of this size. */
export const POOL_SIZE = 20;
export const SEED_TARGETS = 200;
export const SEARCH_LIMIT = 100;
export const DATABASE_URL = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
/** 32 characters, as the service requires with DATABASE_URL. */
export const MASTER_KEY = "bench-masterkey-0123456789abcdef";
/** Gives up on a single request after this long; the runs stay bounded. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** The checkout: this file runs as dist/bench/settings.js. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
