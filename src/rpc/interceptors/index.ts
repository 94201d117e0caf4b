import type { Interceptor } from "@connectrpc/connect";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../../store/database.js";
import { authenticationInterceptor } from "./authentication.js";
import { authorizationInterceptor } from "./authorization.js";
import { featureFlagInterceptor } from "./feature-flags.js";
import { requestLogInterceptor } from "./request-log.js";
import { tenantInterceptor } from "./tenant.js";
import { validationInterceptor } from "./validation.js";

export interface InterceptorDeps {
  /** Lookups on a cache miss run as the call's own database work, bounded by its deadline. */
  store: Pick<Store, "forRequest">;
  logger: Logger;
  flags: FeatureFlags;
  /** Host names that select the same instance as another (see server/host.ts). */
  hostAliases: ReadonlyMap<string, string>;
}

/**
 * The order every call passes through, outermost first. gRPC, gRPC-web, Connect and the
 * REST gateway all run this one chain. Action executions (request/response) will sit
 * between validation and the handler.
 */
export function interceptorChain(deps: InterceptorDeps): Interceptor[] {
  return [
    requestLogInterceptor(deps.logger),
    tenantInterceptor(deps.store, deps.hostAliases),
    authenticationInterceptor(deps.store),
    authorizationInterceptor(),
    featureFlagInterceptor(deps.flags),
    validationInterceptor(),
  ];
}
