import { failedPrecondition } from "../errors.js";
import { mfaRequired, type LoginSettings } from "../settings/login.js";
import type { Db, Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { SecondFactorType } from "./model.js";
import { usableFactors, type Factors } from "./queries.js";

/** What the login settings let a person use as the step after a password: its allowed second factors (strongest first), and its passkey where multi-factors are. */
export interface AllowedFactors {
  factors: SecondFactorType[];
  passkey: boolean;
}

export function allowedFactors(usable: Factors, settings: LoginSettings): AllowedFactors {
  return { factors: usable.factors.filter((f) => settings.secondFactors.includes(f)), passkey: usable.passkey && settings.multiFactors.includes("passkey") };
}

const some = (a: AllowedFactors) => a.factors.length > 0 || a.passkey;

/**
 * Whether a sign-in must ask for a second factor (`ask`, with the person's factors the login
 * settings allow, strongest first, and `passkey` when its passkey may be that step) or have
 * one set up first (`setUp`: forced, none usable, and not put off within
 * `mfa_init_skip_lifetime`). A person who has a factor is always asked for it, after an
 * identity provider too: else knowing the password of a person with a second factor, and
 * linking one's own account at a provider to it, would be enough. `external` (an identity
 * provider alone vouched for the person) only waives the set-up where `force_mfa_local_only`
 * says so. One rule for the login pages and the session API's finalization.
 */
export async function secondFactorDue(
  db: Db | Tx,
  user: UserRow,
  settings: LoginSettings,
  external: boolean,
): Promise<{ ask: boolean; setUp: boolean } & AllowedFactors> {
  const allowed = allowedFactors(await usableFactors(db, user), settings);
  if (some(allowed)) return { ask: true, setUp: false, ...allowed };
  const required = mfaRequired(settings, external);
  const skipped = user.mfa_init_skipped_at ? Date.now() - new Date(user.mfa_init_skipped_at).getTime() < settings.mfaInitSkipLifetimeMs : false;
  return { ask: false, setUp: required && !skipped, ...allowed };
}

/**
 * Takes a factor away (`remove`, in the caller's transaction). `keepOne`: the login settings
 * of a person removing its own while they force a second factor: when it had a factor they
 * allow and would be left with none, FailedPrecondition, and the transaction undoes the
 * removal (an administrator may remove the last, as when a phone is lost).
 */
export async function removeKeepingOne(tx: Tx, user: UserRow, keepOne: LoginSettings | undefined, remove: () => Promise<void>): Promise<void> {
  if (!keepOne) return remove();
  const before = some(allowedFactors(await usableFactors(tx, user), keepOne));
  await remove();
  if (before && !some(allowedFactors(await usableFactors(tx, user), keepOne))) {
    throw failedPrecondition(`the login settings require a second factor and this is the last of user ${user.id}: add another first, or ask an administrator`);
  }
}

/** An identity provider alone vouched for the person (no password typed here, as when linking). */
export const vouchedForElsewhere = (amr: string[]) => amr.includes("fed") && !amr.includes("pwd");

/** Whether a sign-in's `amr` holds a checked second factor: a code, or a key (a security key or passkey). */
export const secondFactorChecked = (amr: string[]) => amr.includes("otp") || amr.includes("hwk") || amr.includes("swk");
