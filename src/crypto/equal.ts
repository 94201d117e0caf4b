import { timingSafeEqual } from "node:crypto";

/**
 * Whether a secret a caller presents (a token, a code's MAC, a CSRF token, a hash) equals
 * the expected one, in time that depends only on their lengths: the one comparison of
 * secrets in the code base.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const x = typeof a === "string" ? Buffer.from(a) : a;
  const y = typeof b === "string" ? Buffer.from(b) : b;
  return x.length === y.length && timingSafeEqual(x, y);
}
