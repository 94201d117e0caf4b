import { describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/encryption.js";

const KEY = "0123456789abcdef0123456789abcdef";
const OTHER = "fedcba9876543210fedcba9876543210";

/** Flips one bit of the given part (1 iv, 2 tag, 3 data) of a sealed secret. */
function tamper(sealed: string, part: 1 | 2 | 3): string {
  const parts = sealed.split(".");
  const bytes = Buffer.from(parts[part]!, "base64url");
  bytes[0] = bytes[0]! ^ 0x01;
  parts[part] = bytes.toString("base64url");
  return parts.join(".");
}

describe("SecretBox", () => {
  const box = new SecretBox(KEY);

  it.each(["a signing key", "", "ünïcødé ✓ 🔑", "x".repeat(100_000)])("round-trips %#", (plaintext) => {
    const sealed = box.encrypt(plaintext);
    expect(sealed.startsWith("v1.")).toBe(true);
    expect(box.decrypt(sealed)).toBe(plaintext);
    expect(new SecretBox(KEY).decrypt(sealed)).toBe(plaintext);
  });

  it("uses a fresh IV each time and does not leak the plaintext", () => {
    const a = box.encrypt("same secret");
    const b = box.encrypt("same secret");
    expect(a).not.toBe(b);
    expect(a).not.toContain("same secret");
    expect(a).not.toContain(Buffer.from("same secret").toString("base64url"));
  });

  it.each([
    ["the IV", 1],
    ["the tag", 2],
    ["the ciphertext", 3],
  ] as const)("detects tampering with %s", (_, part) => {
    const sealed = box.encrypt("do not touch");
    expect(() => box.decrypt(tamper(sealed, part))).toThrow();
  });

  it("fails with the wrong key", () => {
    expect(() => new SecretBox(OTHER).decrypt(box.encrypt("secret"))).toThrow();
  });

  it.each(["", "v2.a.b.c", "v1.a.b", "not sealed", "v1..."])("rejects the malformed input %j", (sealed) => {
    expect(() => box.decrypt(sealed)).toThrow();
  });

  it.each([
    ["31 characters", "a".repeat(31)],
    ["33 characters", "a".repeat(33)],
    ["empty", ""],
    ["32 characters but 64 bytes", "é".repeat(32)],
  ])("rejects a key of %s", (_, key) => {
    expect(() => new SecretBox(key)).toThrow(/32 bytes/);
  });
});
