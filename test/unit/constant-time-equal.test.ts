import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/crypto/equal.js";

describe("constantTimeEqual", () => {
  it("is true only for the same bytes, as text or bytes", () => {
    expect(constantTimeEqual("token-a", "token-a")).toBe(true);
    expect(constantTimeEqual("token-a", "token-b")).toBe(false);
    expect(constantTimeEqual(Buffer.from("c0ffee", "hex"), Buffer.from([0xc0, 0xff, 0xee]))).toBe(true);
    expect(constantTimeEqual("é", Buffer.from("é"))).toBe(true);
  });

  it("is false, without throwing, for secrets of other lengths (timingSafeEqual alone throws)", () => {
    expect(constantTimeEqual("short", "longer")).toBe(false);
    expect(constantTimeEqual("", "x")).toBe(false);
    expect(constantTimeEqual(Buffer.alloc(0), Buffer.alloc(0))).toBe(true);
  });
});
