/** What the OIDC benchmark's orchestrator and its baseline provider agree on. */

export const BASELINE_ISSUER = "http://localhost";

/** The client that asks for tokens (client_credentials, Basic). */
export const BASELINE_CLIENT = { id: "bench-machine", secret: "bench-machine-secret-0123456789abcdefghijk" } as const;
/** The client that introspects (the resource server), as the service's API app does. */
export const BASELINE_API = { id: "bench-api", secret: "bench-api-secret-0123456789abcdefghijklmno" } as const;

/** Resource indicators: each picks the access token's format and signing algorithm. */
export const BASELINE_RESOURCES = {
  opaque: "urn:bench:opaque",
  jwtRs256: "urn:bench:jwt-rs256",
  jwtEs256: "urn:bench:jwt-es256",
} as const;

/** The one scope of every resource server. */
export const BASELINE_SCOPE = "read";

/** The account of the baseline's userinfo tokens. */
export const BASELINE_ACCOUNT = "bench-account";
