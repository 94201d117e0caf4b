import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signatureHeader, verifySignature } from "../../src/engines/actions/signature.js";

describe("Platform-Signature", () => {
  const body = '{"fullMethod":"/a.B/C"}';
  const now = 1_800_000_000;

  it("is t and one v1 per key: the hex HMAC-SHA256 of '<t>.<body>'", () => {
    const header = signatureHeader(body, ["new", "old"], now);
    const hmac = (key: string) => createHmac("sha256", key).update(`${now}.${body}`).digest("hex");
    expect(header).toBe(`t=${now},v1=${hmac("new")},v1=${hmac("old")}`);
    expect(verifySignature(header, body, "new", 300, now)).toBe(true);
    expect(verifySignature(header, body, "old", 300, now)).toBe(true);
    expect(verifySignature(header, body, "other", 300, now)).toBe(false);
  });

  it("refuses another body, an old or future timestamp, and malformed headers without throwing", () => {
    const header = signatureHeader(body, ["k"], now);
    expect(verifySignature(header, `${body} `, "k", 300, now)).toBe(false);
    expect(verifySignature(header, body, "k", 300, now + 301)).toBe(false);
    expect(verifySignature(header, body, "k", 300, now - 301)).toBe(false);
    for (const bad of ["", "t=", `t=${now}`, `t=${now},v1=zz`, `t=${now},v1=${"g".repeat(64)}`, `v1=${"0".repeat(64)}`, "garbage"]) {
      expect(verifySignature(bad, body, "k", 300, now), bad).toBe(false);
    }
  });
});
