import { readCookie } from "../../../http/cookies.js";
import type { NodeRequest } from "../../../http/respond.js";

/**
 * What the browser said it can do with WebAuthn, in a cookie the pages' script sets on each
 * page it runs on (webauthn-script.ts): `platform` when it has an authenticator of its own
 * that verifies the person (Touch ID, Windows Hello, a phone's screen lock), `roaming` when it
 * has WebAuthn but no such authenticator (security keys, a phone nearby), absent when no
 * script ran (JavaScript off, a client without a browser) or it has no WebAuthn. A hint about
 * the browser for what the pages offer, not a proof of anything: no check relies on it.
 * - The offer of a passkey after a sign-in is made to `platform` browsers only: elsewhere it
 *   would lead to a step the person cannot finish (or to a phone it did not ask for).
 * - The set-up of a forced second factor offers a security key or passkey, and the
 *   second-factor step starts with a key, only where the browser has WebAuthn at all.
 */

export const CAPABILITY_COOKIE = "webauthn";

export type WebAuthnCapability = "platform" | "roaming";

export function webauthnCapability(req: Pick<NodeRequest, "headers">): WebAuthnCapability | undefined {
  const value = readCookie(req.headers.cookie, CAPABILITY_COOKIE);
  return value === "platform" || value === "roaming" ? value : undefined;
}
