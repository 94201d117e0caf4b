import http from "node:http";
import http2 from "node:http2";

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP/1.1 request with exactly the given headers (fetch refuses some, e.g. Origin). */
export function h1(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? "GET", headers: opts.headers, agent: opts.agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** One request on an open HTTP/2 session. */
export function h2(
  session: http2.ClientHttp2Session,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": opts.method ?? "GET", ":path": path, ...opts.headers });
    let status = 0;
    let headers: http.IncomingHttpHeaders = {};
    let body = "";
    stream.setEncoding("utf8");
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h as http.IncomingHttpHeaders;
    });
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => resolve({ status, headers, body }));
    stream.on("error", reject);
    stream.end(opts.body);
  });
}

/** Comma-separated header values, lower-cased, as a set. */
export function headerList(value: string | string[] | undefined): Set<string> {
  const joined = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(
    joined
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}
