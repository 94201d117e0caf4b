import { ConfigError, HOUR_MS, integer, url } from "./env.js";

/** Bounds of the connection layer; every one an environment variable (README). */
export interface HttpLimits {
  /** A request head (on a new connection: its first bytes and the HTTP/2 preface) must arrive within this. */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** Idle keep-alive connections and idle HTTP/2 sessions close after this. */
  idleTimeoutMs: number;
  /** Connections over this are closed at once. */
  maxConnections: number;
  /** Concurrent streams per HTTP/2 session; more are refused with REFUSED_STREAM. */
  http2MaxStreams: number;
  /** Memory one HTTP/2 session may buffer, in MiB (node's maxSessionMemory). */
  http2MaxSessionMemoryMb: number;
  /** On shutdown, in-flight requests get this long before their connections are cut. */
  shutdownGraceMs: number;
  /** The whole shutdown (the grace, then the workers, caches and database): past it the process exits with 1. */
  shutdownTimeoutMs: number;
}

/** Where and how the service listens (src/server/). */
export interface HttpSettings {
  port: number;
  bind: string;
  externalUrl: URL;
  tls: { certPath: string; keyPath: string } | undefined;
  /** Origins allowed for browser calls; ["*"] allows any. */
  corsOrigins: string[];
  maxBodyBytes: number;
  http: HttpLimits;
}

export function httpSettings(env: NodeJS.ProcessEnv): HttpSettings {
  const port = integer(env, "PLATFORM_PORT", 8080, 0, 65535);
  const cert = env.PLATFORM_TLS_CERT_PATH;
  const key = env.PLATFORM_TLS_KEY_PATH;
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError("PLATFORM_TLS_CERT_PATH and PLATFORM_TLS_KEY_PATH go together");
  }
  const shutdownGraceMs = integer(env, "PLATFORM_SHUTDOWN_GRACE_MS", 10_000, 0, HOUR_MS);
  return {
    port,
    bind: env.PLATFORM_BIND || "0.0.0.0",
    externalUrl: url(env, "PLATFORM_EXTERNAL_URL", `http://localhost:${port}`),
    tls: cert && key ? { certPath: cert, keyPath: key } : undefined,
    corsOrigins: (env.PLATFORM_CORS_ORIGINS || "*")
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean),
    maxBodyBytes: integer(env, "PLATFORM_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    http: {
      headersTimeoutMs: integer(env, "PLATFORM_HTTP_HEADERS_TIMEOUT_MS", 10_000, 100, HOUR_MS),
      requestTimeoutMs: integer(env, "PLATFORM_HTTP_REQUEST_TIMEOUT_MS", 60_000, 100, HOUR_MS),
      idleTimeoutMs: integer(env, "PLATFORM_HTTP_IDLE_TIMEOUT_MS", 65_000, 100, HOUR_MS),
      maxConnections: integer(env, "PLATFORM_MAX_CONNECTIONS", 10_000, 1, 1_000_000),
      http2MaxStreams: integer(env, "PLATFORM_HTTP2_MAX_STREAMS", 100, 1, 10_000),
      http2MaxSessionMemoryMb: integer(env, "PLATFORM_HTTP2_MAX_SESSION_MEMORY_MB", 10, 1, 1024),
      shutdownGraceMs,
      shutdownTimeoutMs: integer(env, "PLATFORM_SHUTDOWN_TIMEOUT_MS", shutdownGraceMs + 20_000, shutdownGraceMs + 1_000, 2 * HOUR_MS),
    },
  };
}
