import { constantTimeEqual } from "../../../crypto/equal.js";

/** A form's CSRF token against the interaction's, compared in constant time. */
export function sameToken(given: string | undefined, expected: string): boolean {
  return given !== undefined && constantTimeEqual(given, expected);
}
