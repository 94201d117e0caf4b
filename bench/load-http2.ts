import http2 from "node:http2";
import net from "node:net";
import { closedLoop, type Measurement } from "./measure.js";
import { CONNECTIONS, HOST, REQUEST_TIMEOUT_MS } from "./settings.js";

/** One HTTP/2 request to send, built anew for each call (`n` counts calls). */
export type Http2Request = (n: number) => {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
};

/**
 * `concurrency` concurrent streams (CONNECTIONS unless told) on one HTTP/2 session to
 * 127.0.0.1, the response read to the end; with `sessions` > 1 the streams are spread over
 * that many sessions (as a client with several channels: one connection reaches one worker of
 * a service with several). The same loop drives the gRPC service and the baseline, so that
 * both pay the same client cost. A gRPC call succeeds only with grpc-status 0 in its trailers.
 * `opened` is called once the sessions are connected, as the measured loop starts.
 */
export async function loadHttp2(
  port: number,
  request: Http2Request,
  seconds: number,
  authority = `${HOST}:${port}`,
  concurrency = CONNECTIONS,
  sessions = 1,
  opened?: () => void,
): Promise<Measurement> {
  const open = Array.from({ length: sessions }, () => {
    // Without Nagle's algorithm, as gRPC clients connect (grpc-core sets TCP_NODELAY on every
    // client socket): else a call's DATA frame waits behind its HEADERS frame for an ACK, which
    // at 1 call in flight halved gRPC's rate (746 → 1,257 req/s, docs/benchmarks.md).
    const session = http2.connect(`http://${authority}`, { createConnection: () => net.connect({ port, host: HOST, noDelay: true }) });
    session.on("error", () => {});
    return session;
  });
  try {
    await Promise.all(
      open.map(
        (session) =>
          new Promise<void>((resolve, reject) => {
            session.once("connect", () => resolve());
            session.once("error", reject);
          }),
      ),
    );
    return await closedLoop(concurrency, seconds, (n) => send(open[n % sessions]!, request(n)), opened);
  } finally {
    for (const session of open) session.close();
  }
}

function send(session: http2.ClientHttp2Session, req: ReturnType<Http2Request>): Promise<boolean> {
  return new Promise((resolve) => {
    const stream = session.request({
      ":method": req.method,
      ":path": req.path,
      ...(typeof req.body === "string" && { "content-type": "application/json" }),
      ...req.headers,
    });
    let status = 0;
    let grpcStatus: string | undefined;
    const ok = () => status >= 200 && status < 300 && (grpcStatus === undefined || grpcStatus === "0");
    stream.setTimeout(REQUEST_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
      const early = headers["grpc-status"];
      if (early !== undefined) grpcStatus = String(early);
    });
    stream.on("trailers", (trailers) => (grpcStatus = String(trailers["grpc-status"])));
    stream.on("data", () => {});
    stream.on("error", () => resolve(false));
    stream.on("close", () => resolve(ok() && stream.readableEnded));
    stream.end(req.body);
  });
}
