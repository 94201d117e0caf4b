import { createHmac, randomBytes } from "node:crypto";
import { constantTimeEqual } from "../../../crypto/equal.js";
import { hashToken } from "../../../crypto/tokens.js";
import { readCookie, setCookieValue } from "../../../http/cookies.js";
import type { Db } from "../../../store/db.js";
import { payloadAdapters, type OidcAdapter, type OidcPayload } from "../../adapters/payload-adapter.js";

/**
 * The accounts that signed in on one user agent, kept beside the provider's session:
 * node-oidc-provider holds one account per browser session, while the spec lets a person
 * choose between the accounts signed in on the browser. The browser carries a random id in
 * a signed, HttpOnly, SameSite=Lax cookie (Secure when the issuer is https); the entries
 * live in `oidc_payloads` under the SHA-256 of that id, so a copy of the table names no
 * cookie. An entry says "this account signed in here at authTime, by amr"; it counts
 * until authTime + the session lifetime, and goes when that account signs out.
 */

const KNOWN_ACCOUNTS_COOKIE = "platform_accounts";
const MODEL = "KnownAccounts";
/** A person with more accounts than this on one browser loses the oldest. */
const MAX_ENTRIES = 20;

export interface KnownAccount {
  accountId: string;
  /** Seconds since the epoch of the sign-in that proved it: of its first factor, its oldest check (the ID token's `auth_time`). */
  authTime: number;
  /** How it proved it (`pwd`, `fed`): the ID tokens of a later choice of this account say so. */
  amr?: string[];
  /** When its second factor was checked, if it had one (domain/user-factor/check-lifetimes.ts). */
  secondAt?: number;
}

/** The signing key of the cookie, from the key of the login forms (pages.ts `csrfKey`). */
export function knownAccountsKey(formsKey: string): string {
  return createHmac("sha256", formsKey).update("known-accounts").digest("base64url");
}

function sign(key: string, id: string): string {
  return createHmac("sha256", key).update(id).digest("base64url");
}

/** The id a Cookie header carries, when its signature holds. */
function knownAccountsId(cookieHeader: string | undefined, key: string): string | undefined {
  const [id, mac] = (readCookie(cookieHeader, KNOWN_ACCOUNTS_COOKIE) ?? "").split(".");
  if (!id || !mac) return undefined;
  return constantTimeEqual(mac, sign(key, id)) ? id : undefined;
}

export class KnownAccounts {
  readonly #adapter: OidcAdapter;

  constructor(
    db: () => Db,
    instanceId: string,
    private readonly key: string,
    /** How long a sign-in counts: the provider's session lifetime. */
    private readonly ttlS: number,
  ) {
    this.#adapter = new (payloadAdapters(db, instanceId))(MODEL);
  }

  /** The entries still valid for this browser, newest sign-in first. */
  async list(cookieHeader: string | undefined, now = Math.floor(Date.now() / 1000)): Promise<KnownAccount[]> {
    const id = knownAccountsId(cookieHeader, this.key);
    if (!id) return [];
    return this.#live(await this.#adapter.find(hashToken(id)), now);
  }

  /** This browser's entry of one account, if it is still valid. */
  async find(cookieHeader: string | undefined, accountId: string): Promise<KnownAccount | undefined> {
    return (await this.list(cookieHeader)).find((a) => a.accountId === accountId);
  }

  #live(payload: OidcPayload | undefined, now: number): KnownAccount[] {
    const accounts = Array.isArray(payload?.accounts) ? (payload.accounts as KnownAccount[]) : [];
    return accounts.filter((a) => a.authTime + this.ttlS > now).sort((a, b) => b.authTime - a.authTime);
  }

  /**
   * Records a sign-in; returns the Set-Cookie value to send when the browser had no valid
   * cookie yet (a new id), else undefined.
   */
  async remember(cookieHeader: string | undefined, entry: KnownAccount, secure: boolean): Promise<string | undefined> {
    const existing = knownAccountsId(cookieHeader, this.key);
    const id = existing ?? randomBytes(24).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const current = existing ? this.#live(await this.#adapter.find(hashToken(id)), now) : [];
    const accounts = [entry, ...current.filter((a) => a.accountId !== entry.accountId)].slice(0, MAX_ENTRIES);
    await this.#adapter.upsert(hashToken(id), { accounts }, this.ttlS);
    if (existing) return undefined;
    return setCookieValue(KNOWN_ACCOUNTS_COOKIE, `${id}.${sign(this.key, id)}`, { path: "/", maxAge: this.ttlS, secure });
  }

  /** Forgets an account on this browser (it signed out). */
  async forget(cookieHeader: string | undefined, accountId: string): Promise<void> {
    const id = knownAccountsId(cookieHeader, this.key);
    if (!id) return;
    const now = Math.floor(Date.now() / 1000);
    const accounts = this.#live(await this.#adapter.find(hashToken(id)), now).filter((a) => a.accountId !== accountId);
    if (accounts.length === 0) await this.#adapter.destroy(hashToken(id));
    else await this.#adapter.upsert(hashToken(id), { accounts }, this.ttlS);
  }
}
