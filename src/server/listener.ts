import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { NodeRequest, NodeResponse } from "../http/respond.js";

export type RequestHandler = (req: NodeRequest, res: NodeResponse) => void;

export interface Listener {
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish, then closes idle connections. */
  close(graceMs?: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port for every protocol. Cleartext: the first bytes tell HTTP/2 (gRPC) from
 * HTTP/1.1 (browsers, curl, REST). TLS: ALPN picks h2 or http/1.1.
 */
export async function listen(
  handler: RequestHandler,
  opts: { port: number; host: string; tls?: { certPath: string; keyPath: string } },
): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  const busy = new WeakMap<net.Socket, number>();
  let closing = false;
  let server: net.Server;
  let h2: http2.Http2Server | http2.Http2SecureServer;
  let h1: http.Server | undefined;

  if (opts.tls) {
    h2 = http2.createSecureServer(
      { cert: readFileSync(opts.tls.certPath), key: readFileSync(opts.tls.keyPath), allowHTTP1: true },
      handler,
    );
    server = h2;
  } else {
    h2 = http2.createServer({}, handler);
    h1 = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      // http.Server only tracks idle keep-alive connections on sockets it accepted
      // itself, so this one counts requests per socket to close idle ones on shutdown.
      const socket = req.socket;
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      if (closing) res.setHeader("connection", "close");
      res.on("close", () => {
        const left = (busy.get(socket) ?? 1) - 1;
        busy.set(socket, left);
        if (closing && left === 0) socket.destroy();
      });
      handler(req, res);
    });
    server = net.createServer((socket) => route(socket, h2 as http2.Http2Server, h1!));
  }
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;

  return {
    port: address.port,
    async close(graceMs = 10_000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.close();
      if (h1) for (const socket of sockets) if (!busy.get(socket) && !isHttp2(socket)) socket.destroy();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}

const h2Sockets = new WeakSet<net.Socket>();
const isHttp2 = (socket: net.Socket) => h2Sockets.has(socket);

/** A connection that sends nothing is closed before it holds a descriptor for long. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;

/** Reads until the preface can be told apart, then hands the socket over unread. */
function route(socket: net.Socket, h2: http2.Http2Server, h1: http.Server): void {
  let received = Buffer.alloc(0);
  socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const n = Math.min(received.length, PREFACE.length);
    const isH2 = received.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (isH2 && received.length < PREFACE.length) return;
    socket.off("data", onData);
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(received);
    if (isH2) {
      // http2 reads the buffered bytes itself; resuming here would drop them.
      h2Sockets.add(socket);
      h2.emit("connection", socket);
    } else {
      h1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
