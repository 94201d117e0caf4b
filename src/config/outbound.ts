import { boolean, duration, integer } from "./env.js";

/** Calls to other servers (upstream identity providers, action targets; src/http/outbound.ts). */
export interface OutboundSettings {
  /** Loopback, private, link-local and metadata addresses may be called (tests, on-premises). */
  allowPrivate: boolean;
  /** Bounds each call, connecting to reading the whole answer. */
  timeoutMs: number;
  /** Longer answers are an error. */
  maxResponseBytes: number;
}

export function outboundSettings(env: NodeJS.ProcessEnv): { outbound: OutboundSettings } {
  return {
    outbound: {
      allowPrivate: boolean(env, "PLATFORM_OUTBOUND_ALLOW_PRIVATE", false),
      timeoutMs: duration(env, "PLATFORM_OUTBOUND_TIMEOUT", "10s", 5 * 60_000),
      maxResponseBytes: integer(env, "PLATFORM_OUTBOUND_MAX_RESPONSE_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    },
  };
}
