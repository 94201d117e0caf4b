import { Code, ConnectError } from "@connectrpc/connect";
import { WindowLimiter } from "../http/window-limiter.js";

/**
 * Bounds the database work that values a client makes up can cause: each Host name and
 * bearer token nobody knows costs a lookup (repeated ones are cached as misses, see
 * AccessCache), so one address may cause at most `perMinute` lookups that find nothing; past
 * that, its lookups that the caches cannot answer are refused without asking the database
 * until the minute ends. Per process, like the login limits.
 */
export class UnknownLookups {
  readonly #misses: WindowLimiter;

  constructor(perMinute: number) {
    this.#misses = new WindowLimiter(perMinute, 60_000);
  }

  /**
   * What `load` finds for a caller at `address`, counting a miss against it. The lookup is
   * counted before it starts and given back when it finds something, so that a burst of
   * concurrent made-up values cannot all pass a budget they have not spent yet.
   */
  async load<V>(address: string | undefined, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const key = address ?? "";
    const wait = this.#misses.refusal(key);
    if (wait !== undefined) throw new TooManyUnknownLookups(wait);
    let value: V | undefined;
    try {
      value = await load();
    } catch (error) {
      this.#misses.giveBack(key);
      throw error;
    }
    if (value !== undefined) this.#misses.giveBack(key);
    return value;
  }
}

/** ResourceExhausted, with the seconds until the caller's window ends (Retry-After). */
export class TooManyUnknownLookups extends ConnectError {
  constructor(readonly retryAfterS: number) {
    super("too many unknown hosts or tokens from this address; try again later", Code.ResourceExhausted);
    this.metadata.set("retry-after", String(retryAfterS));
  }
}
