import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { HttpLimits } from "../config/http.js";
import type { NodeRequest, NodeResponse } from "../http/respond.js";
import { enableRequestTimeouts, HeadDeadlines, Http2Sessions, http2Options, type ConnectionStats } from "./connection-limits.js";

export type RequestHandler = (req: NodeRequest, res: NodeResponse) => void;

export interface Listener {
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish, then closes idle connections. */
  close(graceMs?: number): Promise<void>;
  /** Open connections, HTTP/2 sessions and HTTP/2 streams right now. */
  stats(): ConnectionStats;
}

export interface ListenOptions {
  port: number;
  host: string;
  tls?: { certPath: string; keyPath: string };
  limits: HttpLimits;
  /** Accepting failed, e.g. out of file descriptors: the connection is lost, the server carries on. */
  onAcceptError?: (error: Error) => void;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port for every protocol. Cleartext: the first bytes tell HTTP/2 (gRPC) from
 * HTTP/1.1 (browsers, curl, REST). TLS: ALPN picks h2 or http/1.1.
 *
 * A plain net.Server owns the port in both cases and hands each socket on, so that the
 * connection cap is applied before any protocol work (a TLS handshake costs far more than
 * a refused connection) and counts the same way with or without TLS. It also starts each
 * connection's head deadline: the handshake, the first bytes and the first request head (or the
 * HTTP/2 preface and SETTINGS) all share headersTimeoutMs from the accept.
 */
export async function listen(handler: RequestHandler, opts: ListenOptions): Promise<Listener> {
  const { limits } = opts;
  const sockets = new Set<net.Socket>();
  /** Cleartext sockets whose protocol is not known yet: they hold no request. */
  const unrouted = new Set<net.Socket>();
  const busy = new WeakMap<net.Socket, number>();
  const sessions = new Http2Sessions(limits);
  const heads = new HeadDeadlines(limits.headersTimeoutMs);
  let closing = false;

  const handle: RequestHandler = (req, res) => {
    // Node closes idle HTTP/1.1 connections on shutdown, but one whose request is in
    // flight then stays open after its response; this counts requests per socket to close it.
    if (req.httpVersionMajor < 2) {
      const socket = req.socket;
      heads.requestHead(socket);
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      if (closing) res.setHeader("connection", "close");
      res.on("close", () => {
        const left = (busy.get(socket) ?? 1) - 1;
        busy.set(socket, left);
        if (closing && left === 0) socket.destroy();
      });
    }
    handler(req, res);
  };
  // node answers an Expect it cannot meet with 417 and emits no 'request': this is that answer,
  // heard, so that the connection's first-head deadline ends there too.
  const expectationFailed = (req: NodeRequest, res: NodeResponse) => {
    if (req.httpVersionMajor < 2) heads.requestHead(req.socket);
    res.statusCode = 417;
    res.end();
  };

  let h1: http.Server | http2.Http2SecureServer;
  let h2: http2.Http2Server | http2.Http2SecureServer;
  let accept: (socket: net.Socket) => void;
  if (opts.tls) {
    const secure = http2.createSecureServer(
      {
        cert: readFileSync(opts.tls.certPath),
        key: readFileSync(opts.tls.keyPath),
        allowHTTP1: true,
        // The handshake is the first part of a new connection's head; it starts at the accept,
        // so this is the head's deadline (HeadDeadlines) too.
        handshakeTimeout: limits.headersTimeoutMs,
        ...http2Options(limits),
      },
      handle,
    );
    h1 = h2 = secure;
    secure.on("checkExpectation", expectationFailed);
    // Before node's own listener starts reading requests from it.
    secure.prependListener("secureConnection", (socket) => {
      if (socket.alpnProtocol !== "h2") heads.awaitFirstRequest(socket);
    });
    accept = (socket) => secure.emit("connection", socket);
  } else {
    const h2c = http2.createServer(http2Options(limits), handle);
    const plain = http.createServer(handle);
    plain.on("checkExpectation", expectationFailed);
    h1 = plain;
    h2 = h2c;
    accept = (socket) => {
      unrouted.add(socket);
      socket.once("close", () => unrouted.delete(socket));
      route(socket, h2c, plain, heads.remainingMs(socket), (isH2) => {
        unrouted.delete(socket);
        if (!isH2) heads.awaitFirstRequest(socket);
      });
    };
  }
  enableRequestTimeouts(h1, limits);
  h2.on("session", (session) => sessions.add(session, heads.remainingMs(session.socket)));

  // node:cluster workers each count their own: the cap is per process, like the memory it guards.
  const server = net.createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => socket.destroy());
    if (sockets.size >= limits.maxConnections || closing) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    heads.accepted(socket);
    accept(socket);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // A failed accept (out of descriptors) is emitted as 'error': unheard, it would end the
  // process. It can repeat with every connection, so it is reported at most once a second.
  let reported = 0;
  server.on("error", (error) => {
    if (Date.now() - reported < 1_000) return;
    reported = Date.now();
    opts.onAcceptError?.(error);
  });
  const address = server.address() as net.AddressInfo;

  return {
    port: address.port,
    stats: () => ({ connections: sockets.size, http2Sessions: sessions.open.size, http2Streams: sessions.streams }),
    async close(graceMs = limits.shutdownGraceMs) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // It never listened: this closes its idle keep-alive connections and stops its timeout checks.
      h1.close();
      for (const session of sessions.open) session.close();
      for (const socket of unrouted) socket.destroy();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}

/**
 * Reads until the preface can be told apart, then hands the socket over unread; `routed` is
 * told which way first. The next stage gets what is left of the head's budget (HeadDeadlines).
 */
function route(socket: net.Socket, h2: http2.Http2Server, h1: http.Server, timeoutMs: number, routed: (isH2: boolean) => void): void {
  let received = Buffer.alloc(0);
  // A deadline, not an idle timeout: a byte now and then must not keep a connection unrouted.
  const timer = setTimeout(() => socket.destroy(), timeoutMs).unref();
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const n = Math.min(received.length, PREFACE.length);
    const isH2 = received.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (isH2 && received.length < PREFACE.length) return;
    socket.off("data", onData);
    clearTimeout(timer);
    routed(isH2);
    socket.pause();
    socket.unshift(received);
    if (isH2) {
      // http2 reads the buffered bytes itself; resuming here would drop them.
      h2.emit("connection", socket);
    } else {
      h1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
}
