import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TtlCache } from "../../src/cache/ttl-cache.js";

describe("TtlCache", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("returns entries until their TTL has passed", () => {
    const cache = new TtlCache<string, number>(1_000);
    cache.set("a", 1);
    expect(cache.get("a")).toBe(1);
    vi.advanceTimersByTime(999);
    expect(cache.get("a")).toBe(1);
    vi.advanceTimersByTime(1);
    expect(cache.get("a")).toBeUndefined();
  });

  it("restarts the TTL when an entry is set again", () => {
    const cache = new TtlCache<string, number>(1_000);
    cache.set("a", 1);
    vi.advanceTimersByTime(800);
    cache.set("a", 2);
    vi.advanceTimersByTime(800);
    expect(cache.get("a")).toBe(2);
  });

  it("stores nothing with a TTL of zero", () => {
    const cache = new TtlCache<string, number>(0);
    cache.set("a", 1);
    expect(cache.get("a")).toBeUndefined();
  });

  it("evicts the oldest entry when full", () => {
    const cache = new TtlCache<string, number>(60_000, 2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBe(2);
    expect(cache.get("c")).toBe(3);
  });

  it("counts a re-set entry as the newest", () => {
    const cache = new TtlCache<string, number>(60_000, 2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("a", 10);
    cache.set("c", 3);
    expect(cache.get("a")).toBe(10);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("c")).toBe(3);
  });

  it("deletes and clears", () => {
    const cache = new TtlCache<string, number>(60_000);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.delete("a");
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBe(2);
    cache.clear();
    expect(cache.get("b")).toBeUndefined();
  });

  it("getOrLoad loads once per TTL", async () => {
    const cache = new TtlCache<string, number>(1_000);
    const load = vi.fn(async () => 42);
    expect(await cache.getOrLoad("k", load)).toBe(42);
    expect(await cache.getOrLoad("k", load)).toBe(42);
    expect(load).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(await cache.getOrLoad("k", load)).toBe(42);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it("getOrLoad does not cache a failed load", async () => {
    const cache = new TtlCache<string, number>(1_000);
    await expect(cache.getOrLoad("k", async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.getOrLoad("k", async () => 7)).toBe(7);
  });
});
