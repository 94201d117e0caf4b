import { createHmac } from "node:crypto";
import { constantTimeEqual } from "../../crypto/equal.js";

/**
 * The `Platform-Signature` header of a call to a target, in the scheme Stripe made common:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>`, one `v1` per key that may
 * sign (the current one, and the previous one while a regeneration's grace period lasts).
 * The timestamp is signed with the body, so a receiver can refuse replays of old calls.
 */
export const SIGNATURE_HEADER = "platform-signature";

export function signatureHeader(body: string, keys: readonly string[], nowS = Math.floor(Date.now() / 1000)): string {
  return [`t=${nowS}`, ...keys.map((key) => `v1=${sign(key, nowS, body)}`)].join(",");
}

function sign(key: string, t: number, body: string): string {
  return createHmac("sha256", key).update(`${t}.${body}`).digest("hex");
}

/**
 * What a receiver runs (the README shows it): true when one `v1` is the body's signature by
 * `key` and `t` is within `toleranceS` of now.
 */
export function verifySignature(header: string, body: string, key: string, toleranceS = 300, nowS = Math.floor(Date.now() / 1000)): boolean {
  const parts = header.split(",").map((p) => p.trim().split("=", 2) as [string, string]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const expected = Buffer.from(sign(key, t, body), "hex");
  return parts.some(([k, v]) => k === "v1" && v !== undefined && /^[0-9a-f]+$/i.test(v) && constantTimeEqual(Buffer.from(v, "hex"), expected));
}
