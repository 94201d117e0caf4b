import { baseUrl, duration, HOUR_MS, integer } from "./env.js";

/** Upstream identity providers of external login (src/oidc/login/external/; docs/oidc.md). */
export interface ExternalLoginSettings {
  /** Discovery documents and JWKS are kept at most this long, whatever their Cache-Control allows; 0: never. */
  cacheMaxAgeMs: number;
  /** How long one whose Cache-Control has no max-age (nor no-store or no-cache) is kept. */
  cacheDefaultAgeMs: number;
  /** Documents kept per process, the oldest going first. */
  cacheSize: number;
  /** Longer documents are used but not kept (with cacheSize, this bounds the memory they take). */
  cacheMaxDocumentBytes: number;
  /** An ID token signed by a key the kept JWKS lacks refetches it, at most once per this per provider. */
  jwksRefetchIntervalMs: number;
  /** GitHub's web address (authorization, token endpoint) and its API's (user, emails). */
  githubUrl: string;
  githubApiUrl: string;
  /** Microsoft's identity platform (Azure AD providers: `<url>/<tenant>/v2.0`) and Sign in with Apple (its issuer). */
  azureAdUrl: string;
  appleUrl: string;
  /** An API intent must come back from the provider this long after its start, and its token is usable this long after that. */
  intentTtlMs: number;
  /** An LDAP provider's timeout per server (connecting, each operation) at most, and the one of a provider without. */
  ldapMaxTimeoutMs: number;
  /** How far a SAML identity provider's clock may be from ours when an assertion's time window is checked. */
  samlClockSkewMs: number;
}

export function externalLoginSettings(env: NodeJS.ProcessEnv): { externalLogin: ExternalLoginSettings } {
  return {
    externalLogin: {
      cacheMaxAgeMs: duration(env, "PLATFORM_IDP_CACHE_MAX_AGE", "1h", 24 * HOUR_MS, 0),
      cacheDefaultAgeMs: duration(env, "PLATFORM_IDP_CACHE_DEFAULT_AGE", "5m", 24 * HOUR_MS, 0),
      cacheSize: integer(env, "PLATFORM_IDP_CACHE_SIZE", 1000, 1, 1_000_000),
      cacheMaxDocumentBytes: integer(env, "PLATFORM_IDP_CACHE_MAX_DOCUMENT_BYTES", 65_536, 0, 64 * 1024 * 1024),
      jwksRefetchIntervalMs: duration(env, "PLATFORM_IDP_JWKS_REFETCH_INTERVAL", "30s", HOUR_MS),
      githubUrl: baseUrl(env, "PLATFORM_GITHUB_URL", "https://github.com"),
      githubApiUrl: baseUrl(env, "PLATFORM_GITHUB_API_URL", "https://api.github.com"),
      azureAdUrl: baseUrl(env, "PLATFORM_AZURE_AD_URL", "https://login.microsoftonline.com"),
      appleUrl: baseUrl(env, "PLATFORM_APPLE_URL", "https://appleid.apple.com"),
      intentTtlMs: duration(env, "PLATFORM_IDP_INTENT_TTL", "10m", 24 * HOUR_MS),
      ldapMaxTimeoutMs: duration(env, "PLATFORM_LDAP_MAX_TIMEOUT", "10s", 5 * 60_000, 100),
      samlClockSkewMs: duration(env, "PLATFORM_SAML_CLOCK_SKEW", "1m", 10 * 60_000, 0),
    },
  };
}
