import { ConfigError, duration, HOUR_MS, integer } from "./env.js";

/** The OpenID Connect provider's lifetimes, keys and caches (docs/oidc.md). */
export interface OidcSettings {
  accessTokenTtlS: number;
  idTokenTtlS: number;
  refreshTokenTtlS: number;
  signingAlg: "ES256" | "RS256";
  keyRotateEveryMs: number;
  keyPublishAheadMs: number;
  /** Cache-Control max-age of the JWKS; must stay below the publication lead. */
  jwksMaxAgeS: number;
  /** Providers (one per issuer) kept in memory. */
  providerCacheSize: number;
  /** How often expired OpenID Connect rows are deleted. */
  sweepIntervalMs: number;
}

export function oidcSettings(env: NodeJS.ProcessEnv): { oidc: OidcSettings } {
  const signingAlg = env.PLATFORM_OIDC_SIGNING_ALG || "RS256";
  if (signingAlg !== "RS256" && signingAlg !== "ES256") throw new ConfigError(`PLATFORM_OIDC_SIGNING_ALG must be RS256 or ES256, not "${signingAlg}"`);
  const oidc: OidcSettings = {
    accessTokenTtlS: duration(env, "PLATFORM_OIDC_ACCESS_TOKEN_TTL", "1h", 24 * HOUR_MS) / 1000,
    idTokenTtlS: duration(env, "PLATFORM_OIDC_ID_TOKEN_TTL", "1h", 24 * HOUR_MS) / 1000,
    refreshTokenTtlS: duration(env, "PLATFORM_OIDC_REFRESH_TOKEN_TTL", "720h", 8760 * HOUR_MS) / 1000,
    signingAlg,
    keyRotateEveryMs: duration(env, "PLATFORM_OIDC_KEY_ROTATE_EVERY", "24h", 8760 * HOUR_MS),
    keyPublishAheadMs: duration(env, "PLATFORM_OIDC_KEY_PUBLISH_AHEAD", "1h", 24 * HOUR_MS),
    jwksMaxAgeS: duration(env, "PLATFORM_OIDC_JWKS_MAX_AGE", "5m", 24 * HOUR_MS) / 1000,
    providerCacheSize: integer(env, "PLATFORM_OIDC_PROVIDER_CACHE_SIZE", 100, 1, 100_000),
    sweepIntervalMs: duration(env, "PLATFORM_OIDC_SWEEP_INTERVAL", "5m", 24 * HOUR_MS),
  };
  // A relying party caching the JWKS for longer than a new key's lead could meet a token
  // signed by a key it has never seen.
  if (oidc.jwksMaxAgeS * 1000 >= oidc.keyPublishAheadMs) {
    throw new ConfigError("PLATFORM_OIDC_JWKS_MAX_AGE must be shorter than PLATFORM_OIDC_KEY_PUBLISH_AHEAD");
  }
  if (oidc.keyPublishAheadMs >= oidc.keyRotateEveryMs) {
    throw new ConfigError("PLATFORM_OIDC_KEY_PUBLISH_AHEAD must be shorter than PLATFORM_OIDC_KEY_ROTATE_EVERY");
  }
  return { oidc };
}
