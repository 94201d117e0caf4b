import { duration, HOUR_MS, integer } from "./env.js";

/** Long-lived streams: grpc.health.v1.Health/Watch and PlatformEvents/WatchEvents (rpc/services/events/watch.ts). */
export interface WatchStreamSettings {
  /** Open grpc.health.v1.Health/Watch streams per process; further ones are ResourceExhausted. */
  maxWatchStreams: number;
  /** PlatformEvents/WatchEvents: how its streams poll and how long they last. */
  eventWatch: { pollMs: number; heartbeatMs: number; maxDurationMs: number; perInstance: number };
}

export function watchStreamSettings(env: NodeJS.ProcessEnv): WatchStreamSettings {
  return {
    maxWatchStreams: integer(env, "PLATFORM_MAX_WATCH_STREAMS", 1000, 0, 1_000_000),
    eventWatch: {
      pollMs: duration(env, "PLATFORM_EVENTS_WATCH_POLL_INTERVAL", "1s", 60_000, 50),
      heartbeatMs: duration(env, "PLATFORM_EVENTS_WATCH_HEARTBEAT", "15s", HOUR_MS, 100),
      maxDurationMs: duration(env, "PLATFORM_EVENTS_WATCH_MAX_DURATION", "1h", 24 * HOUR_MS, 1000),
      perInstance: integer(env, "PLATFORM_EVENTS_WATCH_PER_INSTANCE", 10, 0, 10_000),
    },
  };
}
