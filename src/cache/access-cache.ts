import type { AccessEpoch } from "./access-epoch.js";
import { TtlCache } from "./ttl-cache.js";

/**
 * Lookups that hold until the next change of access anywhere (AccessEpoch: this process at
 * its commit, the others by NOTIFY) or their time to live, whichever comes first. While the
 * epoch is not reliable (the listening connection is down) every get loads afresh. Only
 * what was found is kept: something created meanwhile is never hidden by a cached miss.
 */
export class AccessCache<K, V> {
  private readonly entries: TtlCache<K, { value: V; epoch: number }>;

  constructor(
    private readonly access: AccessEpoch,
    ttlMs: number,
  ) {
    this.entries = new TtlCache(ttlMs);
  }

  /** The cached value, else what `load` finds; `fresh` may refuse a cached value (an expired token's). */
  async get(key: K, load: () => Promise<V | undefined>, fresh: (value: V) => boolean = () => true): Promise<V | undefined> {
    const cached = this.entries.get(key);
    if (cached && cached.epoch === this.access.value && this.access.reliable && fresh(cached.value)) return cached.value;
    // The epoch before the load: a change committed during it makes the entry stale at once.
    const epoch = this.access.value;
    const value = await load();
    if (value !== undefined) this.entries.set(key, { value, epoch });
    return value;
  }
}
