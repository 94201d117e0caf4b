import { hash, randomInt } from "node:crypto";
import { randomBytesPooled } from "./random.js";

/** Opaque bearer tokens: 32 random bytes, base64url. */
export function newOpaqueToken(bytes = 32): string {
  return randomBytesPooled(bytes).toString("base64url");
}

/**
 * Tokens carry 256 bits of entropy, so a fast hash is enough to make a stolen table
 * useless (as GitHub does for its tokens); a slow password hash would only cost latency
 * on every request.
 */
export function hashToken(token: string): string {
  // One-shot: no Hash object per call (every authenticated request hashes its token).
  return hash("sha256", token, "base64url");
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function randomAlphanumeric(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}
