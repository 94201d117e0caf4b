import type http from "node:http";
import http2 from "node:http2";
import type { HttpLimits } from "../config/config.js";

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
 * of its first byte (a connection's first head: of the hand-over), the request within requestTimeout,
 * the client gets a 408 while a response is still possible, and the response itself,
 * however long it streams, is never timed.
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

  add(session: http2.ServerHttp2Session): void {
    const { headersTimeoutMs, idleTimeoutMs, requestTimeoutMs } = this.limits;
    this.open.add(session);
    let active = 0;
    // The client's SETTINGS follow its preface: together they are the session's "head".
    let timer = setTimeout(() => session.destroy(), headersTimeoutMs).unref();
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
      const body = stream.endAfterHeaders
        ? undefined
        : setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), requestTimeoutMs).unref();
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
