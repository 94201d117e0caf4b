/**
 * At most `limit` events per key in a fixed window of `windowMs`, per process, remembering
 * at most `maxKeys` keys (the oldest go first). Cheap and good enough against guessing from
 * one address or at one login name; it is not shared between processes.
 */
export class WindowLimiter {
  readonly #counts = new Map<string, { window: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one event; false when the key is over its limit (0: no limit). */
  take(key: string, now = Date.now()): boolean {
    if (this.limit === 0) return true;
    const window = Math.floor(now / this.windowMs);
    const entry = this.#counts.get(key);
    if (entry && entry.window === window) {
      entry.count++;
      return entry.count <= this.limit;
    }
    this.#counts.delete(key);
    if (this.#counts.size >= this.maxKeys) this.#counts.delete(this.#counts.keys().next().value!);
    this.#counts.set(key, { window, count: 1 });
    return true;
  }

  /** Takes back one event counted in the current window (one that turned out not to count). */
  giveBack(key: string, now = Date.now()): void {
    const entry = this.#counts.get(key);
    if (entry && entry.window === Math.floor(now / this.windowMs) && entry.count > 0) entry.count--;
  }

  /** Seconds until the current window ends. */
  retryAfterS(now = Date.now()): number {
    return Math.ceil((this.windowMs - (now % this.windowMs)) / 1000);
  }
}
