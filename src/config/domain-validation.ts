import { dnsServers, duration, HOUR_MS, integer } from "./env.js";

/** Proving that an organization owns a domain (src/domain/org-domain/validation.ts). */
export interface DomainValidationSettings {
  /** ValidateDomain accepts a token this long after it was generated. */
  tokenTtlMs: number;
  /** Servers asked for TXT records and, when set, for the address of the HTTP check; undefined: the system's. */
  dnsServers: string[] | undefined;
  /** Bounds one DNS lookup. */
  dnsTimeoutMs: number;
  /** Ports the HTTP check calls: 443 and 80 but where the service reaches the web through a port mapping, or in tests. */
  httpsPort: number;
  httpPort: number;
}

export function domainValidationSettings(env: NodeJS.ProcessEnv): { domainValidation: DomainValidationSettings } {
  return {
    domainValidation: {
      tokenTtlMs: duration(env, "PLATFORM_DOMAIN_VALIDATION_TTL", "72h", 720 * HOUR_MS, 60_000),
      dnsServers: dnsServers(env, "PLATFORM_DNS_SERVERS"),
      dnsTimeoutMs: duration(env, "PLATFORM_DNS_TIMEOUT", "5s", 60_000, 100),
      httpsPort: integer(env, "PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT", 443, 1, 65535),
      httpPort: integer(env, "PLATFORM_DOMAIN_VALIDATION_HTTP_PORT", 80, 1, 65535),
    },
  };
}
