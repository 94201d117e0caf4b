import type http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type { HttpLimits } from "../config/http.js";

/** Open counts right now, for metrics. */
export interface ConnectionStats {
  connections: number;
  http2Sessions: number;
  http2Streams: number;
}

/**
 * Turns on node:http's own request timeouts for a server that is handed its sockets.
 *
 * node:http times heads and bodies only on connections in its connection list, and it
 * creates that list and the interval that checks it on 'listening' (setupConnectionsTracking
 * in lib/_http_server.js, the same in node 20 and 22). Our HTTP/1.1 servers never listen:
 * the front door hands them sockets, so without this a half-sent request was held forever.
 * node then does the rest as on any server: a head must be complete within headersTimeout
 * of its first byte, the request within requestTimeout, the client gets a 408 while a response
 * is still possible, and the response itself, however long it streams, is never timed.
 * A connection's first head is due sooner, within headersTimeout of the accept: HeadDeadlines.
 */
export function enableRequestTimeouts(server: http.Server | http2.Http2SecureServer, limits: HttpLimits): void {
  // node refuses a headers timeout above the request timeout; the request timeout bounds both.
  const headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  Object.assign(server, {
    headersTimeout,
    requestTimeout: limits.requestTimeoutMs,
    // http2's secure server leaves it unset, which kept idle HTTP/1.1 over TLS open forever.
    // node closes about a second after the time it advertises, so that clients trusting
    // the advertised timeout do not race the close.
    keepAliveTimeout: limits.idleTimeoutMs,
    // node's 30 s default would let a timeout fire up to 30 s late; the check walks only
    // connections that are mid-request, so checking often is cheap.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
  });
  server.emit("listening");
}

/** node:http's answer to a request too slow to arrive (requestTimeoutResponse in lib/_http_server.js). */
const REQUEST_TIMEOUT = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";

/** The sockets that say where a connection comes from: an HTTP/2 session's socket is a proxy. */
type Addressed = Pick<net.Socket, "localAddress" | "localPort" | "remoteAddress" | "remotePort">;

/**
 * A new connection's whole head is due within headersTimeoutMs of its accept: the TLS
 * handshake, the first bytes that tell the protocol, then the first HTTP/1.1 request head or
 * the HTTP/2 preface and the client's SETTINGS. Each stage gets only what the earlier ones left.
 * Timed from each hand-over instead, a client that finished every stage just in time held the
 * connection for twice the limit, over TLS three times (node restarts the headers timeout of
 * a connection's first request at its first byte, however long the connection was silent).
 *
 * One connection shows as different objects to the stages: the TCP socket, over TLS the
 * TLSSocket on it (node has no public way from one to the other), to HTTP/2 a proxy of either.
 * So a connection is known by its addresses, which no two open TCP connections share.
 */
export class HeadDeadlines {
  private readonly due = new Map<string, { at: number }>();
  /** HTTP/1.1 sockets whose first request head has not come yet. */
  private readonly firstRequest = new WeakMap<net.Socket, NodeJS.Timeout>();

  constructor(private readonly timeoutMs: number) {}

  /** A connection just accepted: its head is due from now. */
  accepted(socket: net.Socket): void {
    const key = addressKey(socket);
    if (key === undefined) return; // already reset by the client
    const entry = { at: performance.now() + this.timeoutMs };
    this.due.set(key, entry);
    socket.once("close", () => {
      if (this.due.get(key) === entry) this.due.delete(key);
    });
  }

  /** What is left of the head budget of the connection under `socket` (a full one if it is not known). */
  remainingMs(socket: Addressed): number {
    const key = addressKey(socket);
    const entry = key === undefined ? undefined : this.due.get(key);
    return entry === undefined ? this.timeoutMs : Math.max(0, entry.at - performance.now());
  }

  /**
   * An HTTP/1.1 connection handed to node:http: its first request head must come in what is
   * left, or it gets node's 408 and is closed. node's own headers timeout, started later,
   * still times that head too, and alone every later head on the connection.
   */
  awaitFirstRequest(socket: net.Socket): void {
    const timer = setTimeout(() => {
      // No request was emitted on this socket, so no response has begun that a 408 would corrupt.
      if (socket.writable) socket.write(REQUEST_TIMEOUT);
      socket.destroy();
    }, this.remainingMs(socket)).unref();
    this.firstRequest.set(socket, timer);
    socket.once("close", () => clearTimeout(timer));
  }

  /** A request head on this HTTP/1.1 socket is complete: from the second on, this costs a lookup. */
  requestHead(socket: net.Socket): void {
    const timer = this.firstRequest.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.firstRequest.delete(socket);
  }
}

function addressKey(socket: Addressed): string | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || remoteAddress === undefined) return undefined;
  return `${localAddress} ${localPort} ${remoteAddress} ${remotePort}`;
}

/** What node:http2 takes from the limits: streams per session and buffered memory. */
export function http2Options(limits: HttpLimits): http2.ServerOptions {
  return {
    // Streams over this are refused with REFUSED_STREAM (or, from a client that already
    // acknowledged the setting, end the session with PROTOCOL_ERROR: nghttp2's choice).
    settings: { maxConcurrentStreams: limits.http2MaxStreams },
    maxSessionMemory: limits.http2MaxSessionMemoryMb,
  };
}

/**
 * The timeouts node:http2 lacks. Its own session timeout counts every frame as activity and
 * fires on quiet sessions too, so it would cut a health Watch that has nothing to say for
 * hours while letting a client that pings keep an unused session forever. Here a session
 * is idle only while it has no open stream, and only unfinished requests are timed.
 */
export class Http2Sessions {
  readonly open = new Set<http2.ServerHttp2Session>();
  streams = 0;

  constructor(private readonly limits: HttpLimits) {}

  /** `headMs`: what is left of the connection's head budget (HeadDeadlines) for the preface and SETTINGS. */
  add(session: http2.ServerHttp2Session, headMs = this.limits.headersTimeoutMs): void {
    const { idleTimeoutMs, requestTimeoutMs } = this.limits;
    this.open.add(session);
    let active = 0;
    // The client's SETTINGS follow its preface: together they are the session's "head".
    let timer = setTimeout(() => session.destroy(), headMs).unref();
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(() => session.close(), idleTimeoutMs).unref();
    };
    session.once("remoteSettings", () => {
      if (active === 0) idle();
    });
    session.on("stream", (stream) => {
      active++;
      this.streams++;
      clearTimeout(timer);
      // A request that ends with its headers has no body to wait for.
      const body = stream.endAfterHeaders ? undefined : setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), requestTimeoutMs).unref();
      stream.once("end", () => clearTimeout(body));
      stream.once("close", () => {
        clearTimeout(body);
        active--;
        this.streams--;
        if (active === 0 && !session.closed && !session.destroyed) idle();
      });
    });
    session.once("close", () => {
      clearTimeout(timer);
      this.open.delete(session);
    });
  }
}
