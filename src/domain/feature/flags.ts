import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
import type { Db } from "../../store/db.js";
import type { ContextRef } from "../context.js";
import { featureSettings } from "../settings/feature.js";
import type { SettingsKind } from "../settings/kind.js";
import { resolveSettings } from "../settings/rows.js";
import type { FeatureSet } from "./catalog.js";

/**
 * Effective flags of an instance: the feature settings resolved there. Cached per process
 * until the access epoch moves: a change advances it at its commit in this process and,
 * by NOTIFY, in every other (cache/access-epoch.ts).
 */
export class FeatureFlags {
  private readonly cache: AccessCache<string, FeatureSet>;
  readonly kind: SettingsKind;

  constructor(
    private readonly db: Db,
    defaults: FeatureSet,
    access: AccessEpoch,
  ) {
    this.kind = featureSettings(defaults);
    this.cache = new AccessCache(access, 60_000);
  }

  async forInstance(instanceId: string): Promise<FeatureSet> {
    return (await this.cache.get(instanceId, () => this.resolve({ type: "instance", instanceId })))!;
  }

  /** The flags in any context, uncached (an organization's token exchange, for one). */
  async resolve(at: ContextRef, db: Db = this.db): Promise<FeatureSet> {
    const { resolved } = await resolveSettings(db, this.kind, at);
    return Object.fromEntries(Object.entries(resolved).map(([name, v]) => [name, v.value === true])) as FeatureSet;
  }
}
