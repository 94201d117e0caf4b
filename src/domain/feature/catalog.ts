import type { Level } from "../settings/kind.js";

/** Every feature flag and its system default (PLATFORM_FEATURES changes the defaults). */
export const FEATURE_DEFAULTS = {
  multitenancy_resources_api: true,
  multitenancy_settings: true,
  actions: true,
  token_exchange: false,
} as const satisfies Record<string, boolean>;

export type FeatureName = keyof typeof FEATURE_DEFAULTS;
export type FeatureSet = Record<FeatureName, boolean>;

const ABOVE_ORGS: ReadonlySet<Level> = new Set(["system", "instance"]);

/**
 * Where each flag may be set. The API flags gate services of a whole instance; token
 * exchange is decided for the organization of the client's project.
 */
export const FEATURE_LEVELS: Record<FeatureName, ReadonlySet<Level>> = {
  multitenancy_resources_api: ABOVE_ORGS,
  multitenancy_settings: ABOVE_ORGS,
  actions: ABOVE_ORGS,
  token_exchange: new Set(["system", "instance", "org"]),
};

export function isFeatureName(name: string): name is FeatureName {
  return Object.hasOwn(FEATURE_DEFAULTS, name);
}
