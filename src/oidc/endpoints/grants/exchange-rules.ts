import { errors } from "oidc-provider";
import { isKnownScope, splitScope, STANDARD_SCOPES } from "../../helpers/scopes.js";
import type { ExchangeToken } from "./exchange-tokens.js";

/** Scopes that only release the user's claims; every other known scope grants something. */
const DATA_SCOPES: ReadonlySet<string> = new Set(STANDARD_SCOPES.filter((s) => s !== "offline_access"));

/**
 * The scopes of the exchanged token. Without `scope`, the subject token's (or, when it carries
 * none, the actor token's). Asked scopes must be held by the subject or actor token (RFC 8693
 * leaves this to policy; ZITADEL's): an exchange never widens what a token may do. A subject
 * that carries no scopes (an ID token, a client's JWT, a user id) may still be asked for the
 * claims of its own user (openid, profile, email, phone, address); offline_access, audience,
 * role and organization scopes must still come from a token. Unknown scopes are dropped.
 */
export function exchangeScopes(asked: string | undefined, subject: ExchangeToken, actor: ExchangeToken | undefined): string[] {
  const wanted = splitScope(asked).filter(isKnownScope);
  const held = new Set([...(subject.scopes ?? []), ...(actor?.scopes ?? [])]);
  if (wanted.length === 0) return subject.scopes?.length ? subject.scopes : (actor?.scopes ?? []);
  const free = subject.scopes === undefined ? DATA_SCOPES : new Set<string>();
  const missing = wanted.filter((s) => !held.has(s) && !free.has(s));
  if (missing.length > 0) throw new errors.InvalidScope(`the subject and actor tokens do not hold ${missing.join(" ")}`, missing.join(" "));
  return wanted;
}

/**
 * The audience of the exchanged token: the asked one, when each entry is an audience of the
 * subject or actor token (RFC 8693 section 2.2.2: else invalid_target), or the subject
 * token's (the actor's when the subject names none, as ZITADEL does).
 */
export function exchangeAudience(asked: string[], subject: ExchangeToken, actor: ExchangeToken | undefined, fallback: string): string[] {
  if (asked.length === 0) {
    const inherited = subject.aud.length > 0 ? subject.aud : (actor?.aud ?? []);
    return inherited.length > 0 ? inherited : [fallback];
  }
  const allowed = new Set([...subject.aud, ...(actor?.aud ?? [])]);
  const foreign = asked.filter((a) => !allowed.has(a));
  if (foreign.length > 0) throw new errors.InvalidTarget(`audience ${foreign.join(", ")} is not an audience of the subject or actor token`);
  return [...new Set(asked)];
}
