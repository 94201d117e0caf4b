import type { Interceptor } from "@connectrpc/connect";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import type { MissCaching } from "../../cache/access-cache.js";
import type { UnknownLookups } from "../../cache/unknown-lookups.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import type { Logger } from "../../log/logger.js";
import type { AccessTokenPrincipals } from "../../oidc/helpers/principals.js";
import type { TenantResolver } from "../../server/tenant-resolver.js";
import type { Store } from "../../store/database.js";
import { authenticationInterceptor } from "./authentication.js";
import { authorizationInterceptor } from "./authorization.js";
import { executionInterceptor, type ExecutionDeps } from "./executions.js";
import { featureFlagInterceptor } from "./feature-flags.js";
import { requestContextInterceptor } from "./request-context.js";
import { requestLogInterceptor } from "./request-log.js";
import { tenantInterceptor } from "./tenant.js";
import { validationInterceptor } from "./validation.js";
import { serverStreamAsUnary, unaryAsServerStream } from "./server-streams.js";

export interface InterceptorDeps {
  /** Lookups on a cache miss run as the call's own database work, bounded by its deadline. */
  store: Pick<Store, "forRequest">;
  logger: Logger;
  flags: FeatureFlags;
  tenants: TenantResolver;
  access: AccessEpoch;
  /** OpenID Connect access tokens, accepted beside personal access tokens. */
  accessTokens: AccessTokenPrincipals;
  /** Request and response executions of PlatformActions (actions/). */
  executions: ExecutionDeps;
  /** Unknown tokens: how long misses are cached, and the per-address bound (shared with the tenant resolver). */
  unknown: { lookups: UnknownLookups; misses: MissCaching };
}

/**
 * The order every call passes through, outermost first. The tenant is the Host's instance
 * until the request context (after authentication, which needs the Host's instance to
 * check the token) replaces it with the one `ctx` selects. gRPC, gRPC-web, Connect and the
 * REST gateway all run this one chain. Action executions (request/response) run after
 * authorization and before validation, so a request a target rewrote is validated too.
 */
export function interceptorChain(deps: InterceptorDeps): Interceptor[] {
  return [
    serverStreamAsUnary(),
    requestLogInterceptor(deps.logger),
    tenantInterceptor(deps.tenants),
    authenticationInterceptor(deps.store, deps.access, deps.accessTokens, deps.unknown),
    requestContextInterceptor(deps.store, deps.access),
    authorizationInterceptor(deps.store, deps.access),
    featureFlagInterceptor(deps.flags),
    executionInterceptor(deps.executions),
    validationInterceptor(),
    unaryAsServerStream(),
  ];
}
