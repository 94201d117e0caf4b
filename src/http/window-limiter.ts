/**
 * At most `limit` events per key in a window of `windowMs` that opens with the key's first
 * event, per process, remembering at most `maxKeys` keys (the oldest go first). Cheap and good
 * enough against guessing from one address or at one login name; it is not shared between
 * processes.
 *
 * Each key's window starts at its own first event rather than on the clock's minute: with
 * windows on the clock, a burst that straddles a boundary (two tries at :59.9, two at :00.1)
 * got twice the limit in a fraction of a second, and "the third within a minute" depended on
 * when in the minute it came.
 */
export class WindowLimiter {
  readonly #counts = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one event; false when the key is over its limit (0: no limit). */
  take(key: string, now = Date.now()): boolean {
    if (this.limit === 0) return true;
    const entry = this.#counts.get(key);
    if (entry && now - entry.start < this.windowMs) {
      entry.count++;
      return entry.count <= this.limit;
    }
    this.#counts.delete(key);
    if (this.#counts.size >= this.maxKeys) this.#counts.delete(this.#counts.keys().next().value!);
    this.#counts.set(key, { start: now, count: 1 });
    return true;
  }

  /** Counts one event; undefined when the key is within its limit, else the seconds until its window ends (retryAfterS). */
  refusal(key: string, now = Date.now()): number | undefined {
    return this.take(key, now) ? undefined : this.retryAfterS(key, now);
  }

  /** Takes back one event counted in the key's current window (one that turned out not to count). */
  giveBack(key: string, now = Date.now()): void {
    const entry = this.#counts.get(key);
    if (entry && now - entry.start < this.windowMs && entry.count > 0) entry.count--;
  }

  /** Seconds until the key's window ends (at least 1); a whole window for a key not counted. */
  retryAfterS(key: string, now = Date.now()): number {
    const entry = this.#counts.get(key);
    const left = entry && now - entry.start < this.windowMs ? entry.start + this.windowMs - now : this.windowMs;
    return Math.max(1, Math.ceil(left / 1000));
  }
}
