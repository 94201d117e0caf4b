import { describe, expect, it } from "vitest";
import { AccessCache } from "../../src/cache/access-cache.js";
import { AccessEpoch } from "../../src/cache/access-epoch.js";

/** A load that ends when the test says, counting how often it started. */
function gate<V>() {
  let calls = 0;
  const pending: { resolve: (v: V | undefined) => void; reject: (e: Error) => void }[] = [];
  return {
    get calls() {
      return calls;
    },
    load: () => {
      calls++;
      return new Promise<V | undefined>((resolve, reject) => pending.push({ resolve, reject }));
    },
    resolve: (i: number, v: V | undefined) => pending[i]!.resolve(v),
    reject: (i: number, e: Error) => pending[i]!.reject(e),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("AccessCache", () => {
  it("shares one load among concurrent misses of a key, and keeps its result", async () => {
    const cache = new AccessCache<string, string>(new AccessEpoch(), 60_000);
    const g = gate<string>();
    const gets = Array.from({ length: 50 }, () => cache.get("token", g.load));
    await tick();
    expect(g.calls).toBe(1);
    g.resolve(0, "principal");
    expect(await Promise.all(gets)).toEqual(Array(50).fill("principal"));
    expect(await cache.get("token", g.load)).toBe("principal");
    expect(g.calls).toBe(1);
    // Other keys load for themselves.
    const other = cache.get("other", g.load);
    await tick();
    expect(g.calls).toBe(2);
    g.resolve(1, "someone else");
    expect(await other).toBe("someone else");
  });

  it("does not share a load that began before a change of access", async () => {
    const access = new AccessEpoch();
    const cache = new AccessCache<string, string>(access, 60_000);
    const g = gate<string>();
    const before = cache.get("token", g.load);
    await tick();
    access.advance();
    const after = cache.get("token", g.load);
    await tick();
    expect(g.calls).toBe(2);
    g.resolve(0, "stale");
    g.resolve(1, "fresh");
    expect(await before).toBe("stale");
    expect(await after).toBe("fresh");
    // The stale result was not kept under the new epoch.
    expect(await cache.get("token", g.load)).toBe("fresh");
    expect(g.calls).toBe(2);
  });

  it("lets the others load for themselves when the shared load fails (its request's deadline)", async () => {
    const cache = new AccessCache<string, string>(new AccessEpoch(), 60_000);
    const g = gate<string>();
    const first = cache.get("token", g.load);
    const second = cache.get("token", g.load);
    await tick();
    g.reject(0, new Error("deadline exceeded"));
    await expect(first).rejects.toThrow("deadline exceeded");
    await tick();
    expect(g.calls).toBe(2);
    g.resolve(1, "principal");
    expect(await second).toBe("principal");
  });

  it("shares nothing while changes of access cannot be heard", async () => {
    const access = new AccessEpoch();
    access.reliable = false;
    const cache = new AccessCache<string, string>(access, 60_000);
    const g = gate<string>();
    const gets = [cache.get("token", g.load), cache.get("token", g.load)];
    await tick();
    expect(g.calls).toBe(2);
    g.resolve(0, "a");
    g.resolve(1, "b");
    expect(await Promise.all(gets)).toEqual(["a", "b"]);
  });

  it("loads again for a caller that refuses the shared value", async () => {
    const cache = new AccessCache<string, { expires: number }>(new AccessEpoch(), 60_000);
    const g = gate<{ expires: number }>();
    const first = cache.get("token", g.load);
    const picky = cache.get("token", g.load, (v) => v.expires > 100);
    await tick();
    g.resolve(0, { expires: 50 });
    expect(await first).toEqual({ expires: 50 });
    await tick();
    expect(g.calls).toBe(2);
    g.resolve(1, { expires: 200 });
    expect(await picky).toEqual({ expires: 200 });
  });
});
