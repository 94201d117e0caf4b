import type { AccessEpoch } from "./access-epoch.js";
import { TtlCache } from "./ttl-cache.js";

/** How long, and how many, lookups that found nothing are remembered. */
export interface MissCaching {
  ttlMs: number;
  maxEntries: number;
}

/**
 * Lookups that hold until the next change of access anywhere (AccessEpoch: this process at
 * its commit, the others by NOTIFY) or their time to live, whichever comes first. While the
 * epoch is not reliable (the listening connection is down) every get loads afresh.
 *
 * What was found is kept. What was not is kept only with `misses` (lookups of values any
 * client may send: Host names, bearer tokens), briefly, and also only until the next change
 * of access: every write that can turn a miss into a hit (an instance or a domain added, a
 * token created, a user or organization let back in) advances the epoch, so a cached miss
 * never hides it.
 */
export class AccessCache<K, V> {
  private readonly entries: TtlCache<K, { value: V; epoch: number }>;
  private readonly misses: TtlCache<K, number> | undefined;
  /**
   * Loads under way, by key. Concurrent misses of one key at one epoch share one load: an
   * entry expiring while many requests need it (one token, one Host, under load) costs one
   * query, not one per waiting request, which would queue them all behind the pool at once.
   */
  private readonly loading = new Map<K, { epoch: number; value: Promise<V | undefined> }>();

  constructor(
    private readonly access: AccessEpoch,
    ttlMs: number,
    misses?: MissCaching,
  ) {
    this.entries = new TtlCache(ttlMs);
    this.misses = misses && misses.maxEntries > 0 ? new TtlCache(misses.ttlMs, misses.maxEntries) : undefined;
  }

  /** The cached value, else what `load` finds; `fresh` may refuse a cached value (an expired token's). */
  async get(key: K, load: () => Promise<V | undefined>, fresh: (value: V) => boolean = () => true): Promise<V | undefined> {
    const current = this.access.value;
    const trusted = this.access.reliable;
    const cached = this.entries.get(key);
    if (cached && cached.epoch === current && trusted && fresh(cached.value)) return cached.value;
    if (trusted && this.misses?.get(key) === current) return undefined;
    const shared = trusted ? this.loading.get(key) : undefined;
    if (shared && shared.epoch === current) {
      try {
        const value = await shared.value;
        if (value === undefined || fresh(value)) return value;
      } catch {
        // The load ran for another request, under its deadline and disconnect: this one loads for itself.
      }
      return this.load(key, load, current, false);
    }
    return this.load(key, load, current, trusted);
  }

  /** `current`: the epoch before the load, so that a change committed during it makes the entry stale at once. */
  private async load(key: K, load: () => Promise<V | undefined>, current: number, share: boolean): Promise<V | undefined> {
    const loading = load();
    if (share) {
      const entry = { epoch: current, value: loading };
      this.loading.set(key, entry);
      const done = () => {
        if (this.loading.get(key) === entry) this.loading.delete(key);
      };
      loading.then(done, done);
    }
    const value = await loading;
    if (value !== undefined) {
      this.entries.set(key, { value, epoch: current });
      this.misses?.delete(key);
    } else this.misses?.set(key, current);
    return value;
  }
}
