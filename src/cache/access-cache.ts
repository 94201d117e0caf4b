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
    // The epoch before the load: a change committed during it makes the entry stale at once.
    const value = await load();
    if (value !== undefined) {
      this.entries.set(key, { value, epoch: current });
      this.misses?.delete(key);
    } else this.misses?.set(key, current);
    return value;
  }
}
