import type { Interceptor } from "@connectrpc/connect";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import type { Logger } from "../../log/logger.js";
import type { Db } from "../../store/eventstore.js";
import { authenticationInterceptor } from "./authentication.js";
import { authorizationInterceptor } from "./authorization.js";
import { featureFlagInterceptor } from "./feature-flags.js";
import { requestLogInterceptor } from "./request-log.js";
import { requestScopeInterceptor } from "./request-scope.js";
import { tenantInterceptor } from "./tenant.js";
import { validationInterceptor } from "./validation.js";

export interface InterceptorDeps {
  db: Db;
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
    requestScopeInterceptor(),
    tenantInterceptor(deps.db, deps.hostAliases),
    authenticationInterceptor(deps.db),
    authorizationInterceptor(),
    featureFlagInterceptor(deps.flags),
    validationInterceptor(),
  ];
}
