import { createHash, randomBytes } from "node:crypto";
import { constantTimeEqual } from "../../../crypto/equal.js";
import { readCookie, setCookieValue } from "../../../http/cookies.js";

/**
 * Binds an external login to the browser that started it. The upstream provider sends the
 * browser back to one callback path with a code and our state; without this binding, anyone
 * holding the upstream authorization URL of a login they started (its state) could make a
 * victim's browser, signed in upstream, deliver the victim's code into the attacker's login.
 *
 * The start sets a random value in an HttpOnly, SameSite=Lax cookie scoped to the callback
 * path (Lax: the provider's redirect back is a top-level GET, which carries it) and keeps
 * only its SHA-256 with the state. The callback redeems nothing unless the browser presents
 * the value whose hash the state holds. Each flow has its own cookie, named after its state's
 * key, so two logins started in two tabs do not undo each other; the callback clears it.
 *
 * A provider that returns with a cross-site POST (Apple's form_post) does not bring the Lax
 * cookie; the callback has the browser post the same fields again from this origin, which
 * does (flow.ts, callback()). The cookie stays Lax either way: SameSite=None would send it
 * with any cross-site request and requires HTTPS, which local setups over http lack.
 */

const PREFIX = "platform_idp_";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** The cookie's name for a flow, from the state's key (its hash, never the state). */
const cookieName = (stateKey: string) => PREFIX + stateKey.slice(0, 22);

export interface Binding {
  /** Kept with the state. */
  hash: string;
  /** The Set-Cookie line for the start's response. */
  setCookie: string;
}

export function newBinding(stateKey: string, path: string, maxAgeS: number, secure: boolean): Binding {
  const value = randomBytes(32).toString("base64url");
  return { hash: digest(value).toString("base64url"), setCookie: setCookieValue(cookieName(stateKey), value, { path, maxAge: maxAgeS, secure }) };
}

/** Whether the request carries a flow's cookie at all (whatever its value): a cross-site POST does not. */
export function hasBinding(cookieHeader: string | undefined, stateKey: string): boolean {
  return readCookie(cookieHeader, cookieName(stateKey)) !== undefined;
}

/** Whether the request's cookies carry the value whose hash the state kept. */
export function isBound(cookieHeader: string | undefined, stateKey: string, hash: string | undefined): boolean {
  const value = readCookie(cookieHeader, cookieName(stateKey));
  if (!value || !hash) return false;
  return constantTimeEqual(Buffer.from(hash, "base64url"), digest(value));
}

/** The Set-Cookie line that removes the flow's cookie (after its callback, whatever the outcome). */
export function clearBinding(stateKey: string, path: string, secure: boolean): string {
  return setCookieValue(cookieName(stateKey), "", { path, maxAge: 0, secure });
}
