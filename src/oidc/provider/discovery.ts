import type { KoaContextWithOIDC } from "oidc-provider";
import { JWT_BEARER, TOKEN_EXCHANGE } from "../models/clients.js";
import { ASSERTION_ALGORITHMS, CLAIMS, CLIENT_AUTH_METHODS } from "./capabilities.js";
import { OIDC_ROUTES } from "./routes.js";

/** What discovery says that depends on the instance's settings. */
export interface InstanceDiscovery {
  tokenExchange: boolean;
  /** The languages the instance allows, in order (never empty). */
  languages: string[];
}

/**
 * What discovery must say beyond the provider's own document: our endpoints, only the
 * grants and claims that work, and the instance's languages (the login pages' ui_locales).
 * Token exchange is decided per organization; it is listed when the instance has it on (as
 * ZITADEL lists it by the instance's feature), which an organization may still turn off
 * for its applications.
 */
export function discoveryAdditions(ctx: KoaContextWithOIDC, { tokenExchange, languages }: InstanceDiscovery): Record<string, unknown> {
  const url = (path: string) => new URL(path, ctx.oidc.issuer).href;
  return {
    grant_types_supported: ["authorization_code", "implicit", "refresh_token", "client_credentials", JWT_BEARER, ...(tokenExchange ? [TOKEN_EXCHANGE] : [])],
    userinfo_endpoint: url(OIDC_ROUTES.userinfo),
    introspection_endpoint: url(OIDC_ROUTES.introspection),
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    revocation_endpoint: url(OIDC_ROUTES.revocation),
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    claims_supported: [...new Set(Object.values(CLAIMS).flat())],
    ui_locales_supported: languages,
  };
}
