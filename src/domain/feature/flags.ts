import { TtlCache } from "../../cache/ttl-cache.js";
import type { Db } from "../../store/eventstore.js";
import type { FeatureName, FeatureSet } from "./catalog.js";

/**
 * Effective flags of an instance: the system defaults from configuration with the
 * instance's overrides on top. Cached for a few seconds per process.
 */
export class FeatureFlags {
  private readonly cache: TtlCache<string, FeatureSet>;

  constructor(
    private readonly db: Db,
    private readonly defaults: FeatureSet,
    ttlMs = 5_000,
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  async forInstance(instanceId: string): Promise<FeatureSet> {
    return this.cache.getOrLoad(instanceId, async () => {
      const overrides = await this.db
        .selectFrom("instance_features")
        .select(["name", "enabled"])
        .where("instance_id", "=", instanceId)
        .execute();
      const set = { ...this.defaults };
      for (const o of overrides) if (o.name in set) set[o.name as FeatureName] = o.enabled;
      return set;
    });
  }

  forget(instanceId: string): void {
    this.cache.delete(instanceId);
  }
}
