import { FEATURE_LEVELS, type FeatureName, type FeatureSet } from "../feature/catalog.js";
import type { PropertyDefinition, SettingsKind } from "./kind.js";

/** The feature flags as settings, with the system defaults this process was configured with. */
export function featureSettings(defaults: FeatureSet): SettingsKind {
  const properties: Record<string, PropertyDefinition> = {};
  for (const name of Object.keys(defaults) as FeatureName[]) {
    properties[name] = { levels: FEATURE_LEVELS[name], builtIn: defaults[name] };
  }
  return { name: "feature", properties };
}
