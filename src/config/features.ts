import { FEATURE_DEFAULTS, isFeatureName, type FeatureSet } from "../domain/feature/catalog.js";
import { ConfigError } from "./env.js";

/** `PLATFORM_FEATURES=token_exchange=on,actions=off` changes the system defaults of the feature flags. */
export function featureSettings(env: NodeJS.ProcessEnv): { features: FeatureSet } {
  const features: FeatureSet = { ...FEATURE_DEFAULTS };
  for (const item of (env.PLATFORM_FEATURES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = item.split("=");
    if (!name || !isFeatureName(name) || (value !== "on" && value !== "off")) {
      throw new ConfigError(`PLATFORM_FEATURES item "${item}" must be <flag>=on|off with a flag of ${Object.keys(FEATURE_DEFAULTS).join(", ")}`);
    }
    features[name] = value === "on";
  }
  return { features };
}
