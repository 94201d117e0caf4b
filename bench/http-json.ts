import http from "node:http";
import { HOST } from "./settings.js";

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** What a create call answers, of which the benches read the id. */
export interface Created {
  details: { id: string };
}

export interface JsonResponse {
  status: number;
  /** The parsed JSON, the text when it is not JSON, undefined when empty: each caller names the fields it reads. */
  body: unknown;
}

/**
 * One HTTP/1.1 call to 127.0.0.1 with a JSON body (or a raw one, a form say, whose
 * content-type the headers give), for setup and smoke checks, and for closed loops that read
 * each answer (bench/sessions.ts); `agent`: one with more sockets than this module's 8.
 */
export function requestJson(
  port: number,
  method: string,
  path: string,
  opts: { body?: unknown; rawBody?: string; headers?: Record<string, string>; agent?: http.Agent } = {},
): Promise<JsonResponse> {
  const payload = opts.rawBody !== undefined ? Buffer.from(opts.rawBody) : opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: HOST,
        port,
        method,
        path,
        agent: opts.agent ?? agent,
        timeout: 10_000,
        headers: { ...(payload && { "content-type": "application/json", "content-length": payload.length }), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // Plain-text answers such as /ready stay text.
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

export function closeIdleSockets(): void {
  agent.destroy();
}
