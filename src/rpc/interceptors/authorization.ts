import type { Interceptor } from "@connectrpc/connect";
import { hasPermission } from "../../domain/authz/principal.js";
import { permissionDenied } from "../../domain/errors.js";
import { principalKey, tenantKey } from "../context.js";
import { AUTHENTICATED, PUBLIC, requireRules } from "../method-rules.js";

/** Checks the permission the method declares against the caller's memberships. */
export function authorizationInterceptor(): Interceptor {
  return (next) => async (req) => {
    const rules = requireRules(req.method);
    if (rules.permission === PUBLIC || rules.permission === AUTHENTICATED) return next(req);
    const principal = req.contextValues.get(principalKey);
    const tenant = req.contextValues.get(tenantKey);
    if (!principal || !tenant || !hasPermission(principal, rules.permission, { instanceId: tenant.id })) {
      throw permissionDenied(`missing permission ${rules.permission}`);
    }
    return next(req);
  };
}
