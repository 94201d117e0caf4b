import { describe, expect, it } from "vitest";
import { randomBytesPooled } from "../../src/crypto/random.js";

describe("randomBytesPooled", () => {
  it("hands out the lengths asked for, never the same bytes twice, across refills of the pool", () => {
    const seen = new Set<string>();
    // 3 × 4096 bytes: the pool is refilled, and a draw that does not fit what is left starts a new fill.
    for (let i = 0; i < 1000; i++) {
      const n = [12, 16, 32, 24][i % 4]!;
      const bytes = randomBytesPooled(n);
      expect(bytes.length).toBe(n);
      const hex = bytes.toString("hex");
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
  });

  it("gives each caller its own copy: changing one changes no later draw", () => {
    const first = randomBytesPooled(32);
    first.fill(0);
    const second = randomBytesPooled(32);
    expect(second.equals(Buffer.alloc(32))).toBe(false);
  });

  it("looks uniform: every byte value turns up about as often over 256 KiB", () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 8192; i++) for (const b of randomBytesPooled(32)) counts[b]!++;
    // 1024 expected per value; a fair source stays within ±25 % (about 8 standard deviations).
    for (const c of counts) expect(Math.abs(c - 1024)).toBeLessThan(256);
  });

  it("draws large requests directly, without the pool", () => {
    const big = randomBytesPooled(4096);
    expect(big.length).toBe(4096);
    expect(big.equals(Buffer.alloc(4096))).toBe(false);
  });
});
