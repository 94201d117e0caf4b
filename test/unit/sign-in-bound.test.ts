import { describe, expect, it } from "vitest";
import { SignInBound, type BoundKeys } from "../../src/domain/audit/sign-in-bound.js";

/*
 * The bound on sign-in events (src/domain/audit/sign-in-bound.ts): per user and per address,
 * `burst` attempts a window one by one, the rest in one summary per key once its window
 * ended; every attempt is a row or in exactly one summary; a cap on the keys tracked.
 */

const WINDOW = 60_000;
const I = "01a20000-0000-7000-8000-000000000001";
const ada = { id: "ada", orgId: "org" };
const bob = { id: "bob", orgId: "org" };
const at = (key: Partial<BoundKeys>): BoundKeys => ({ instanceId: I, ...key });

/** `n` attempts of the same keys and outcome at `now`: how many were admitted. */
function flood(bound: SignInBound, keys: BoundKeys, n: number, now: number, outcome = "wrong_password"): number {
  return Array.from({ length: n }, () => bound.admit(keys, outcome, now, true)).filter(Boolean).length;
}

describe("SignInBound", () => {
  it("records the first `burst` attempts of a user, counts the rest into one summary when its window ends", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 3, keys: 100 });
    expect(flood(bound, at({ user: ada }), 5, 1_000)).toBe(3);
    expect(bound.admit(at({ user: ada }), "succeeded", 2_000, true)).toBe(false);
    // Not before the window's end.
    expect(bound.sweep(WINDOW + 999)).toEqual([]);
    expect(bound.sweep(WINDOW + 1_000)).toEqual([
      { instanceId: I, user: ada, count: 3, reasons: { wrong_password: 2, succeeded: 1 }, from: new Date(1_000), to: new Date(2_000) },
    ]);
    // A new window, a new burst; a window without anything counted leaves no summary.
    expect(flood(bound, at({ user: ada }), 3, WINDOW + 2_000)).toBe(3);
    expect(bound.sweep(3 * WINDOW)).toEqual([]);
  });

  it("bounds an address across users; each attempt counts under the first key without room, the user's before the address's", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 2, keys: 100 });
    const address = "203.0.113.9";
    // Ada from the address: two recorded, then Ada's key is spent.
    expect(flood(bound, at({ user: ada, address }), 3, 1_000)).toBe(2);
    // Bob from the same address: Bob's key has room, the address's has not.
    expect(flood(bound, at({ user: bob, address }), 2, 1_500)).toBe(0);
    // Unknown names from it: no user, the address's key.
    expect(flood(bound, at({ address }), 1, 1_600, "unknown_name")).toBe(0);
    // Bob from elsewhere: his key saw two attempts already (counted under the address).
    expect(flood(bound, at({ user: bob, address: "198.51.100.1" }), 1, 1_700)).toBe(0);
    const summaries = bound.sweep(WINDOW + 2_000);
    expect(summaries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ user: ada, count: 1 }),
        expect.objectContaining({ address, count: 3, reasons: { wrong_password: 2, unknown_name: 1 } }),
        expect.objectContaining({ user: bob, count: 1 }),
      ]),
    );
    expect(summaries).toHaveLength(3);
    // 7 attempts: 2 rows, 5 counted once each.
    expect(summaries.reduce((n, s) => n + s.count, 0)).toBe(5);
  });

  it("counts an attempt the writer has no room for into its key's summary", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 10, keys: 100 });
    expect(bound.admit(at({ user: ada }), "succeeded", 1_000, false)).toBe(false);
    expect(bound.sweep(0, true)).toEqual([expect.objectContaining({ user: ada, count: 1, reasons: { succeeded: 1 } })]);
  });

  it("with a burst of 0 records nothing one by one", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 0, keys: 100 });
    expect(flood(bound, at({ user: ada, address: "192.0.2.1" }), 4, 1_000)).toBe(0);
    expect(bound.sweep(0, true)).toEqual([expect.objectContaining({ user: ada, count: 4 })]);
  });

  it("tracks at most `keys` keys: beyond, attempts go into the instance's overflow summary until windows end", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 5, keys: 3 });
    expect(bound.admit(at({ user: ada, address: "192.0.2.1" }), "succeeded", 1_000, true)).toBe(true);
    expect(bound.admit(at({ address: "192.0.2.2" }), "unknown_name", 1_100, true)).toBe(true);
    // Two keys more than the cap allows: neither is tracked, the attempt goes into the overflow.
    expect(bound.admit(at({ user: bob, address: "192.0.2.3" }), "wrong_password", 1_200, true)).toBe(false);
    expect(bound.admit(at({ address: "192.0.2.4" }), "unknown_name", 1_300, true)).toBe(false);
    expect(bound.admit(at({ address: "192.0.2.5" }), "unknown_name", 1_400, true)).toBe(false);
    // Once the first windows end, their keys make room (and the overflow's window ends as well).
    expect(bound.admit(at({ user: bob, address: "192.0.2.3" }), "wrong_password", WINDOW + 1_150, true)).toBe(true);
    expect(bound.sweep(WINDOW + 1_500)).toEqual([
      { instanceId: I, count: 3, reasons: { wrong_password: 1, unknown_name: 2 }, from: new Date(1_200), to: new Date(1_400) },
    ]);
  });

  it("keeps instances apart", () => {
    const bound = new SignInBound({ windowMs: WINDOW, burst: 1, keys: 100 });
    const other = "01a20000-0000-7000-8000-000000000002";
    expect(flood(bound, { instanceId: I, user: ada }, 2, 1_000)).toBe(1);
    expect(flood(bound, { instanceId: other, user: ada }, 2, 1_000)).toBe(1);
    expect(bound.sweep(0, true).map((s) => [s.instanceId, s.count])).toEqual([
      [I, 1],
      [other, 1],
    ]);
  });
});
