import { invalidArgument } from "./errors.js";

/** Ten years (87660 hours): long-lived enough for any service account, short of "never". */
const MAX_LIFETIME_MS = 87_660 * 3_600_000;

/** Credentials expire in the future, and not beyond ten years. */
export function checkExpiration(expiresAt: Date): void {
  const now = Date.now();
  if (expiresAt.getTime() <= now) throw invalidArgument("the expiration date must be in the future");
  if (expiresAt.getTime() > now + MAX_LIFETIME_MS) throw invalidArgument("the expiration date must be at most 10 years ahead");
}
