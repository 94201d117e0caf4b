import autocannon from "autocannon";
import { performance } from "node:perf_hooks";
import { summarize, type Measurement } from "./measure.js";
import { CONNECTIONS, HOST, RAMP_MAX_SECONDS, REQUEST_TIMEOUT_MS } from "./settings.js";

/** One HTTP/1.1 request to send, built anew for each call (`n` counts calls). */
export type Http1Request = (n: number) => { method: "GET" | "POST"; path: string; headers: Record<string, string>; body?: string };

/**
 * HTTP/1.1 load with autocannon: `connections` keep-alive connections, one request in
 * flight on each. Latencies come from autocannon's per-response event, unrounded.
 *
 * The measured window opens once every connection has had its first answer, as the HTTP/2
 * load's opens on a session already connected: the answers of that window count, for
 * `seconds`. A busy Node server accepts one connection per turn of its event loop (libuv
 * since 1.45), so `connections` new connections reach it one after another, and their
 * first requests wait for that: measured inside the window, that ramp made the p99 of every
 * HTTP/1.1 row (docs/benchmarks.md, issue 21 step 9). It is reported on its own, as `rampMs`.
 * `opened` is called as the window opens (the caller's CPU readings).
 */
export function loadHttp1(port: number, request: Http1Request, seconds: number, connections = CONNECTIONS, opened?: () => void): Promise<Measurement> {
  let n = 0;
  const latencies: number[] = [];
  const answered = new Set<unknown>();
  const started = performance.now();
  let openedAt: number | undefined;
  let closedAt: number | undefined;
  let failed = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://${HOST}:${port}`,
        connections,
        // Stopped by the window's end; this bounds a ramp that never ends.
        duration: RAMP_MAX_SECONDS + seconds,
        timeout: REQUEST_TIMEOUT_MS / 1000,
        requests: [
          {
            // autocannon writes Content-Length into the headers object: each request gets its own.
            setupRequest: (base) => {
              const next = request(n++);
              return { ...base, ...next, headers: { ...next.headers } };
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        if (openedAt === undefined) {
          return reject(new Error(`only ${answered.size} of ${connections} connections were answered within ${RAMP_MAX_SECONDS + seconds} s`));
        }
        const elapsed = ((closedAt ?? performance.now()) - openedAt) / 1000;
        resolve({ ...summarize(latencies, failed + result.errors + result.timeouts, elapsed), rampMs: openedAt - started });
      },
    );
    instance.on("response", (client: unknown, status: number, _bytes: number, ms: number) => {
      if (closedAt !== undefined) return;
      const ok = status >= 200 && status < 300;
      // A failure counts wherever it falls: the ramp's requests are requests too.
      if (!ok) failed++;
      if (openedAt === undefined) {
        answered.add(client);
        if (answered.size < connections) return;
        openedAt = performance.now();
        opened?.();
        setTimeout(() => {
          closedAt = performance.now();
          instance.stop();
        }, seconds * 1000);
        return;
      }
      if (ok) latencies.push(ms);
    });
  });
}
