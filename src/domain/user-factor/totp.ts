import { Secret, TOTP } from "otpauth";

/**
 * RFC 6238 as every authenticator app speaks it: SHA-1, six digits, 30-second steps, a code
 * of the step before or after accepted for clocks that drift. otpauth (hectorm/otpauth) does
 * the HOTP arithmetic and the `otpauth://` URI: it is small, has no dependencies, is kept up
 * and is what other Node identity servers use; the rules around it (one use per code, the
 * secret sealed at rest) are ours.
 */

const PERIOD_S = 30;
/** Steps either side of now whose code is accepted (RFC 6238 §5.2 recommends one). */
const WINDOW = 1;

/** A new 160-bit secret (RFC 4226 §4 recommends it), base32 as authenticators take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` URI of a QR code: the issuer is the instance, the label the user's login name. */
export function totpUri(secret: string, issuer: string, account: string): string {
  return totpOf(secret, issuer, account).toString();
}

/**
 * The time step a code is right for, within the window around `now`; undefined when it is
 * wrong. The caller accepts it only past the last accepted step, so that a code is taken once.
 */
export function totpStep(secret: string, code: string, now = Date.now()): number | undefined {
  const token = code.replace(/\s/g, "");
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpOf(secret).validate({ token, window: WINDOW, timestamp: now });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta;
}

function totpOf(secret: string, issuer = "", label = "") {
  return new TOTP({ issuer, label, algorithm: "SHA1", digits: 6, period: PERIOD_S, secret: Secret.fromBase32(secret) });
}
