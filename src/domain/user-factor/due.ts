import { mfaRequired, type LoginSettings } from "../settings/login.js";
import type { Db, Tx } from "../../store/eventstore.js";
import type { UserRow } from "../../store/schema.js";
import type { SecondFactorType } from "./model.js";
import { usableFactors } from "./queries.js";

/**
 * Whether a sign-in must ask for a second factor (`ask`, with the person's factors the login
 * settings allow, strongest first) or have one set up first (`setUp`: forced, none usable,
 * and not put off within `mfa_init_skip_lifetime`). `external`: an identity provider alone
 * vouched for the person. One rule for the login pages and the session API's finalization.
 */
export async function secondFactorDue(db: Db | Tx, user: UserRow, settings: LoginSettings, external: boolean): Promise<{ ask: boolean; setUp: boolean; factors: SecondFactorType[] }> {
  const usable = await usableFactors(db, user);
  const factors = usable.factors.filter((f) => settings.secondFactors.includes(f));
  const required = mfaRequired(settings, external);
  if (factors.length > 0) return { ask: !external || required, setUp: false, factors };
  const skipped = user.mfa_init_skipped_at ? Date.now() - new Date(user.mfa_init_skipped_at).getTime() < settings.mfaInitSkipLifetimeMs : false;
  return { ask: false, setUp: required && !skipped, factors };
}

/** An identity provider alone vouched for the person (no password typed here, as when linking). */
export const vouchedForElsewhere = (amr: string[]) => amr.includes("fed") && !amr.includes("pwd");

/** Whether a sign-in's `amr` holds a checked second factor. */
export const secondFactorChecked = (amr: string[]) => amr.includes("otp");
