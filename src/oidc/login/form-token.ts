import { timingSafeEqual } from "node:crypto";

/** A form's CSRF token against the interaction's, compared in constant time. */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
