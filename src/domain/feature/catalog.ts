/** Every feature flag and its system default; instances may override each one. */
export const FEATURE_DEFAULTS = {
  multitenancy_resources_api: true,
  multitenancy_settings: true,
  actions: true,
  token_exchange: false,
} as const satisfies Record<string, boolean>;

export type FeatureName = keyof typeof FEATURE_DEFAULTS;
export type FeatureSet = Record<FeatureName, boolean>;

export function isFeatureName(name: string): name is FeatureName {
  return Object.hasOwn(FEATURE_DEFAULTS, name);
}
