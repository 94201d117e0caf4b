import type { SettingsKind } from "../../../domain/settings/kind.js";
import { loginSettingsOf } from "../../../domain/settings/login.js";
import { outlivedChecks, type SignInChecks } from "../../../domain/user-factor/check-lifetimes.js";
import { secondFactorDue, vouchedForElsewhere } from "../../../domain/user-factor/due.js";
import { findUserRow } from "../../../domain/user/queries.js";
import type { Db } from "../../../store/db.js";
import type { KnownAccount } from "./known-accounts.js";

/**
 * Whether a browser's sign-in still counts for a new authorization (single sign-on, a known
 * account chosen again): `first` when its first factor outlived its lifetime (the person
 * signs in again), `second` when a second factor is due and the one it checked outlived its
 * lifetime, or it checked none (the factor step is asked again). The check times are this
 * browser's entry of the account (known-accounts.ts); without one, the sign-in's time for both.
 */
export interface Standing {
  first: boolean;
  second: boolean;
  checks: SignInChecks;
}

export interface StandingContext {
  db: Db;
  instanceId: string;
  /** The login settings' kind with the configured defaults. */
  loginSettings: SettingsKind;
}

export async function ssoStanding(
  c: StandingContext,
  accountId: string,
  signIn: { amr: readonly string[]; authTime: number },
  entry: KnownAccount | undefined,
  now = Math.floor(Date.now() / 1000),
): Promise<Standing | undefined> {
  const user = await findUserRow(c.db, c.instanceId, accountId);
  if (!user) return undefined;
  const checks: SignInChecks = entry
    ? { amr: entry.amr ?? signIn.amr, firstAt: entry.authTime, secondAt: entry.secondAt }
    : { amr: signIn.amr, firstAt: signIn.authTime, secondAt: signIn.authTime };
  const settings = await loginSettingsOf(c.db, c.instanceId, user.org_id, c.loginSettings);
  const outlived = outlivedChecks(settings, checks, now);
  if (outlived.first || !outlived.second) return { first: outlived.first, second: false, checks };
  const due = await secondFactorDue(c.db, user, settings, vouchedForElsewhere([...checks.amr]));
  return { first: false, second: due.ask || due.setUp, checks };
}
