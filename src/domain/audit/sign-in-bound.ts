/**
 * How many sign-in attempts are recorded one by one (docs/architecture.md, "Sign-in events").
 * Pure: the caller gives the time.
 *
 * An attempt counts under up to two keys of its instance: its user's (when the account
 * exists) and its address's. A key's window starts with its first attempt and lasts
 * `windowMs`. In it the first `burst` attempts are recorded one by one, as long as the
 * attempt's other key has room too (and the writer has, `room`); any other attempt is only
 * counted, under the first key without room (the user's before the address's), and that
 * key's summary sums them up once its window has ended: how many, by outcome, the first's and
 * the last's time. So every attempt is either a row or in exactly one summary.
 *
 * At most `keys` keys are tracked at once (memory, and the rows one window can bring): an
 * attempt that would need more is counted in its instance's overflow summary, which names
 * neither user nor address and is windowed the same way.
 */

export interface BoundSettings {
  windowMs: number;
  /** Attempts recorded one by one per key and window; 0: all of them go into summaries. */
  burst: number;
  /** Keys tracked at once. */
  keys: number;
}

interface BoundUser {
  id: string;
  orgId: string;
}

export interface BoundKeys {
  instanceId: string;
  user?: BoundUser;
  address?: string;
}

/** The attempts of one key's window that were not recorded one by one. */
export interface Summary extends BoundKeys {
  count: number;
  /** How many of each outcome (`succeeded` or the failure's reason). */
  reasons: Record<string, number>;
  from: Date;
  to: Date;
}

interface Tally extends BoundKeys {
  start: number;
  seen: number;
  counted: number;
  reasons: Record<string, number>;
  first: number;
  last: number;
}

export class SignInBound {
  /** Tracked keys in the order their windows started (a new window is a new entry): those that end first come first. */
  readonly #tallies = new Map<string, Tally>();
  /** Per instance, outside the cap: one per instance at most. */
  readonly #overflow = new Map<string, Tally>();
  readonly #ended: Summary[] = [];

  constructor(private readonly settings: BoundSettings) {}

  /** Counts an attempt: true when it is to be recorded one by one, false when a summary will count it. */
  admit(keys: BoundKeys, outcome: string, now: number, room: boolean): boolean {
    const tallies = this.#tracked(keys, now);
    if (!tallies) {
      count(this.#overflowOf(keys.instanceId, now), outcome, now);
      return false;
    }
    for (const t of tallies) t.seen++;
    const spent = tallies.find((t) => t.seen > this.settings.burst);
    if (!spent && room) return true;
    count(spent ?? tallies[0] ?? this.#overflowOf(keys.instanceId, now), outcome, now);
    return false;
  }

  /** The summaries of the windows ended by `now` (`all`: every window, at shutdown); their keys are forgotten. */
  sweep(now: number, all = false): Summary[] {
    this.#expire(now, all);
    return this.#ended.splice(0);
  }

  #expire(now: number, all: boolean): void {
    const ended = (t: Tally) => all || now >= t.start + this.settings.windowMs;
    for (const [key, t] of this.#tallies) {
      if (!ended(t)) break;
      this.#end(this.#tallies, key, t);
    }
    for (const [key, t] of this.#overflow) if (ended(t)) this.#end(this.#overflow, key, t);
  }

  /** The attempt's tallies, their windows current; undefined when the cap leaves no room for one it lacks. */
  #tracked(keys: BoundKeys, now: number): Tally[] | undefined {
    const wanted: [string, BoundKeys][] = [];
    if (keys.user) wanted.push([`${keys.instanceId} u ${keys.user.id}`, { instanceId: keys.instanceId, user: keys.user }]);
    if (keys.address !== undefined) wanted.push([`${keys.instanceId} a ${keys.address}`, { instanceId: keys.instanceId, address: keys.address }]);
    for (const [key] of wanted) {
      const t = this.#tallies.get(key);
      if (t && now >= t.start + this.settings.windowMs) this.#end(this.#tallies, key, t);
    }
    const missing = wanted.filter(([key]) => !this.#tallies.has(key)).length;
    if (missing > 0 && this.#tallies.size + missing > this.settings.keys) this.#expire(now, false);
    if (this.#tallies.size + missing > this.settings.keys) return undefined;
    return wanted.map(([key, of]) => {
      let t = this.#tallies.get(key);
      if (!t) this.#tallies.set(key, (t = tally(of, now)));
      return t;
    });
  }

  #overflowOf(instanceId: string, now: number): Tally {
    let t = this.#overflow.get(instanceId);
    if (t && now >= t.start + this.settings.windowMs) this.#end(this.#overflow, instanceId, t);
    t = this.#overflow.get(instanceId);
    if (!t) this.#overflow.set(instanceId, (t = tally({ instanceId }, now)));
    return t;
  }

  #end(tallies: Map<string, Tally>, key: string, t: Tally): void {
    tallies.delete(key);
    if (t.counted === 0) return;
    this.#ended.push({
      instanceId: t.instanceId,
      ...(t.user && { user: t.user }),
      ...(t.address !== undefined && { address: t.address }),
      count: t.counted,
      reasons: t.reasons,
      from: new Date(t.first),
      to: new Date(t.last),
    });
  }
}

function tally(keys: BoundKeys, now: number): Tally {
  return { ...keys, start: now, seen: 0, counted: 0, reasons: {}, first: now, last: now };
}

function count(t: Tally, outcome: string, now: number): void {
  if (t.counted === 0) t.first = now;
  t.counted++;
  t.last = now;
  t.reasons[outcome] = (t.reasons[outcome] ?? 0) + 1;
}
