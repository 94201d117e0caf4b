import autocannon from "autocannon";
import { summarize, type Measurement } from "./measure.js";
import { CONNECTIONS, HOST, REQUEST_TIMEOUT_MS } from "./settings.js";

/** One HTTP/1.1 request to send, built anew for each call (`n` counts calls). */
export type Http1Request = (n: number) => { method: "GET" | "POST"; path: string; headers: Record<string, string>; body?: string };

/**
 * HTTP/1.1 load with autocannon: `connections` keep-alive connections, one request in
 * flight on each. Latencies come from autocannon's per-response event, unrounded.
 */
export function loadHttp1(port: number, request: Http1Request, seconds: number, connections = CONNECTIONS): Promise<Measurement> {
  let n = 0;
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://${HOST}:${port}`,
        connections,
        duration: seconds,
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
        resolve(summarize(latencies, result.non2xx + result.errors + result.timeouts, result.duration));
      },
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}
