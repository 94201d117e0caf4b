import { describe, expect, it } from "vitest";
import { WindowLimiter } from "../../src/http/window-limiter.js";

/*
 * The per-process limiter of guesses and codes: each key's window opens with its first event,
 * so a burst is refused the same wherever it falls in the clock's minute.
 */

const MINUTE = 60_000;

describe("WindowLimiter", () => {
  it("refuses the event over the limit within a window that opens with the key's first event, even across the clock's minute", () => {
    const limiter = new WindowLimiter(2, MINUTE);
    const edge = 10 * MINUTE - 50;
    expect(limiter.take("a", edge)).toBe(true);
    expect(limiter.take("a", edge + 20)).toBe(true);
    // 30 ms after the first try, in the next minute of the clock: still the same window.
    expect(limiter.take("a", edge + 80)).toBe(false);
    expect(limiter.retryAfterS("a", edge + 80)).toBe(60);
    // Another key has its own window.
    expect(limiter.take("b", edge + 80)).toBe(true);
    // A minute after the key's first event its window is over.
    expect(limiter.take("a", edge + MINUTE - 1)).toBe(false);
    expect(limiter.retryAfterS("a", edge + MINUTE - 1)).toBe(1);
    expect(limiter.take("a", edge + MINUTE)).toBe(true);
  });

  it("takes back an event that turned out not to count, in the same window only", () => {
    const limiter = new WindowLimiter(1, MINUTE);
    expect(limiter.take("k", 0)).toBe(true);
    limiter.giveBack("k", 10);
    expect(limiter.take("k", 20)).toBe(true);
    expect(limiter.take("k", 30)).toBe(false);
    limiter.giveBack("k", MINUTE + 1);
    expect(limiter.take("k", MINUTE + 2)).toBe(true);
  });

  it("answers a whole window for a key it does not count, never limits at 0, and forgets the oldest key beyond its size", () => {
    const limiter = new WindowLimiter(1, MINUTE, 2);
    expect(limiter.retryAfterS("never", 0)).toBe(60);
    expect(limiter.take("x", 0)).toBe(true);
    expect(limiter.take("y", 0)).toBe(true);
    expect(limiter.take("z", 0)).toBe(true);
    // x was forgotten for z: it starts again.
    expect(limiter.take("x", 1)).toBe(true);
    const open = new WindowLimiter(0, MINUTE);
    for (let i = 0; i < 5; i++) expect(open.take("k", i)).toBe(true);
  });
});
