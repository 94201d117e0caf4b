import type { Interceptor } from "@connectrpc/connect";
import { failedPrecondition } from "../../domain/errors.js";
import { isFeatureName } from "../../domain/feature/catalog.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import { tenantKey } from "../context.js";
import { requireRules } from "../method-rules.js";

/** A method runs only while every feature flag its service and itself name is enabled. */
export function featureFlagInterceptor(flags: FeatureFlags): Interceptor {
  return (next) => async (req) => {
    const rules = requireRules(req.method);
    const tenant = req.contextValues.get(tenantKey);
    if (rules.features.length === 0 || !tenant) return next(req);
    const enabled = await flags.forInstance(tenant.id);
    for (const name of rules.features) {
      if (!isFeatureName(name) || !enabled[name]) {
        throw failedPrecondition(`the feature flag ${name} is disabled for this instance`);
      }
    }
    return next(req);
  };
}
