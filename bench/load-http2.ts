import http2 from "node:http2";
import { closedLoop, type Measurement } from "./measure.js";
import { CONNECTIONS, HOST, REQUEST_TIMEOUT_MS } from "./settings.js";

/** One HTTP/2 request to send, built anew for each call (`n` counts calls). */
export type Http2Request = (n: number) => { method: "GET" | "POST"; path: string; body?: string };

/** CONNECTIONS concurrent streams on one HTTP/2 session, the response body read to the end. */
export async function loadHttp2(port: number, request: Http2Request, seconds: number): Promise<Measurement> {
  const session = http2.connect(`http://${HOST}:${port}`);
  session.on("error", () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      session.once("connect", () => resolve());
      session.once("error", reject);
    });
    return await closedLoop(CONNECTIONS, seconds, (n) => send(session, request(n)));
  } finally {
    session.close();
  }
}

function send(session: http2.ClientHttp2Session, req: ReturnType<Http2Request>): Promise<boolean> {
  return new Promise((resolve) => {
    const stream = session.request({
      ":method": req.method,
      ":path": req.path,
      ...(req.body !== undefined && { "content-type": "application/json" }),
    });
    let status = 0;
    stream.setTimeout(REQUEST_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", () => {});
    stream.on("end", () => resolve(status >= 200 && status < 300));
    stream.on("error", () => resolve(false));
    stream.on("close", () => resolve(status >= 200 && status < 300 && stream.readableEnded));
    stream.end(req.body);
  });
}
