import { findUserRow } from "../../../domain/user/queries.js";
import { clearFailedChecks } from "../../../domain/user/lockout.js";
import { secondFactorChecked, secondFactorDue, vouchedForElsewhere } from "../../../domain/user-factor/due.js";
import type { SignInProgress, SignInStep } from "../kit/context.js";
import { askEmailCode } from "./email-step.js";
import { finishLogin } from "./finish.js";
import { askMfaSetup } from "./mfa-setup.js";
import { signInSettingsOf } from "../kit/org-settings.js";
import { errorBody } from "../view/render.js";
import { askSecondFactor, firstChoice } from "./second-factor.js";
import { askNewPassword, passwordChangeRequired } from "./password-change-step.js";
import { askKeyRegistration, passkeyOfferDue } from "./key-setup.js";
import { writePendingLink } from "../external/pending-link.js";

/**
 * What a sign-in needs after its first factor, in order: the second factor (a person who set
 * one up is asked for it after a password and after an external login alike), or setting one
 * up when the settings force it (`force_mfa_local_only` waives that after an external login)
 * and the person has none; then a new password when an administrator requires one (after a password or a
 * passkey: not after an identity provider alone); then the verified email address
 * `require_verified_email` asks for; then, after a password, the offer of a passkey
 * (key-setup.ts); then the link to an external account the sign-in was for
 * (external/pending-link.ts), written only now that every step passed; then the end. A user-verified passkey (`user`) is two factors: no second
 * factor is asked after it.
 * Every sign-in path comes here (password, registration, reset, external login), so none
 * can skip a step. A right password clears the count of failed checks here, once no second
 * factor is to follow: else typing it again would give back the guesses at a code.
 */
export async function continueSignIn(s: SignInStep, progress: SignInProgress): Promise<void> {
  const p = progress.first === undefined ? { ...progress, first: Math.floor(Date.now() / 1000) } : progress;
  const user = await findUserRow(s.c.db, s.c.instanceId, p.userId);
  if (!user || user.state !== "active") return s.show(403, s.t.errorTitle, errorBody(user?.state === "locked" ? s.t.userLocked : s.t.loginExpired));
  const settings = await signInSettingsOf(s, user.org_id);
  if (!secondFactorChecked(p.amr)) {
    const due = await secondFactorDue(s.c.db, user, settings, vouchedForElsewhere(p.amr));
    if (due.ask) return askSecondFactor(s, p, user, firstChoice(s, due), true);
    if (p.amr.includes("pwd")) await clearFailedChecks(s.c.db, s.c.instanceId, user.id);
    if (due.setUp) return askMfaSetup(s, p, user, settings);
  }
  if ((p.amr.includes("pwd") || p.amr.includes("user")) && (await passwordChangeRequired(s.c.db, s.c.instanceId, user.id))) return askNewPassword(s, p);
  if (settings.requireVerifiedEmail && user.email && user.email_verified !== true) return askEmailCode(s, p, true);
  if (await passkeyOfferDue(s, user, settings, p)) return askKeyRegistration(s, p, user, "passkey", false);
  if (p.link && !(await writePendingLink(s, { ...p, link: p.link }))) return;
  await finishLogin(s.req, s.res, s.c, p.userId, { amr: withMfa(p.amr), authTime: p.first });
}

/** `mfa` when two factors of different kinds were checked (a password or external login, and a code or key), or a passkey verified the person (two in one). */
function withMfa(amr: string[]): string[] {
  return amr.includes("user") || (secondFactorChecked(amr) && (amr.includes("pwd") || amr.includes("fed"))) ? [...amr, "mfa"] : amr;
}
