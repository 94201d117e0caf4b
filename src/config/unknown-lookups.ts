import { integer } from "./env.js";

/**
 * Host names and bearer tokens that nobody knows (src/cache/unknown-lookups.ts): a client may
 * send any, and each would cost a database lookup.
 */
export interface UnknownLookupLimits {
  /** A miss is remembered this long (and until the next change of access); 0: not at all. */
  cacheTtlMs: number;
  /** Misses remembered per cache (hosts; tokens), the oldest going first; 0: none. */
  cacheSize: number;
  /** Lookups that find nothing, per minute and client address, per process; 0: unlimited. */
  perIpPerMinute: number;
}

export function unknownLookupSettings(env: NodeJS.ProcessEnv): { unknownLookups: UnknownLookupLimits } {
  return {
    unknownLookups: {
      cacheTtlMs: integer(env, "PLATFORM_UNKNOWN_CACHE_TTL_MS", 5_000, 0, 60_000),
      cacheSize: integer(env, "PLATFORM_UNKNOWN_CACHE_SIZE", 10_000, 0, 1_000_000),
      perIpPerMinute: integer(env, "PLATFORM_UNKNOWN_LOOKUPS_PER_IP", 600, 0, 1_000_000),
    },
  };
}
