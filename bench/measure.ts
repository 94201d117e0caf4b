import { performance } from "node:perf_hooks";

/** What one load run yields; latencies of successful requests only. */
export interface Measurement {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  /** Non-2xx answers, transport errors and timeouts. */
  errors: number;
  /** CPU time of the load generator (this process) per second of run: 1 = one core busy. */
  loadGeneratorCpu?: number;
  /** CPU time (all threads) of the server under load per successful request, in µs. */
  serverCpuUs?: number;
  /** HTTP/1.1: from the start of the load until every connection had its first answer (load-http1.ts). */
  rampMs?: number;
}

/** The middle of the known values (the lower of the two middle ones for an even count); undefined for none. */
export function median(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  return known.length === 0 ? undefined : known[Math.floor((known.length - 1) / 2)];
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function summarize(latenciesMs: number[], errors: number, elapsedSeconds: number): Measurement {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    requestsPerSecond: latenciesMs.length / elapsedSeconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    ok: latenciesMs.length,
    errors,
  };
}

/**
 * Closed loop: `concurrency` callers, each starting its next call when the last one ends,
 * until `seconds` have passed. `call` resolves true on success; `opened` is called as the loop starts.
 */
export async function closedLoop(concurrency: number, seconds: number, call: (n: number) => Promise<boolean>, opened?: () => void): Promise<Measurement> {
  opened?.();
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await call(n++).catch(() => false);
      if (ok) latencies.push(performance.now() - t0);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize(latencies, errors, (performance.now() - start) / 1000);
}
