import { Secret, TOTP } from "otpauth";

/**
 * Codes of a TOTP authenticator, computed in the tests as an authenticator app would
 * (RFC 6238 defaults: SHA-1, six digits, 30-second steps), from the secret AddTOTP answers.
 */

const PERIOD_MS = 30_000;
const totp = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: PERIOD_MS / 1000 });

/** The code the authenticator shows now (or `steps` time steps from now). */
export function totpCode(secret: string, steps = 0): string {
  return totp(secret).generate({ timestamp: Date.now() + steps * PERIOD_MS });
}

/**
 * The codes the service may accept around now: it takes the step before, this one and the
 * next, and its now may already be in the next step.
 */
function acceptedCodes(secret: string): string[] {
  return [-2, -1, 0, 1, 2].map((steps) => totpCode(secret, steps));
}

/**
 * Six digits that no step around now of any of the secrets has (a "wrong code" that is wrong
 * for sure, not one in a million times right).
 */
export function wrongTotpCode(...secrets: string[]): string {
  const taken = new Set(secrets.flatMap(acceptedCodes));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, "0");
    if (!taken.has(code)) return code;
  }
}

/** A code of `secret` that none of the other secrets would accept now. */
export function totpCodeOnlyOf(secret: string, ...others: string[]): string {
  const theirs = new Set(others.flatMap(acceptedCodes));
  const code = [0, -1, 1].map((steps) => totpCode(secret, steps)).find((c) => !theirs.has(c));
  if (code === undefined) throw new Error("every code of the secret is another's too: run again");
  return code;
}
