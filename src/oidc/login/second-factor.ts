import { findUserRow } from "../../domain/user/queries.js";
import { DomainError } from "../../domain/errors.js";
import { checkSecondFactor, sendSignInCode } from "../../domain/user-factor/checks.js";
import type { SecondFactorCheck } from "../../domain/user-factor/model.js";
import type { UserRow } from "../../store/schema.js";
import type { PromptStep, SignInProgress, SignInStep } from "./context.js";
import { settingsOf } from "./org-settings.js";
import { progressFields, progressOf } from "./progress.js";
import { takeAddressTry } from "./rate-limit.js";
import { errorBody, escapeHtml } from "./render.js";
import type { Texts } from "./texts/index.js";
import { usableFactors } from "../../domain/user-factor/queries.js";

/**
 * The second-factor step (`/mfa`): a code of one of the person's factors the login settings
 * allow, with the others (and a recovery code, while one is unused) one button away. Email
 * and SMS codes are sent when their factor is shown, and again on request. The checks are
 * domain/user-factor/checks.ts's, as for the session API: a wrong code counts toward the
 * lockout of wrong passwords.
 */

/** What the person can verify with here: its allowed factors, strongest first, then a recovery code. */
async function choicesOf(s: SignInStep, user: UserRow): Promise<SecondFactorCheck[]> {
  const [settings, usable] = await Promise.all([settingsOf(s.c, user.org_id), usableFactors(s.c.db, user)]);
  const factors: SecondFactorCheck[] = usable.factors.filter((f) => settings.secondFactors.includes(f));
  return usable.recoveryCodes > 0 ? [...factors, "recovery_code"] : factors;
}

const INTRO: Record<SecondFactorCheck, (t: Texts) => string> = {
  totp: (t) => t.mfaTotpIntro,
  otp_email: (t) => t.mfaEmailIntro,
  otp_sms: (t) => t.mfaSmsIntro,
  recovery_code: (t) => t.mfaRecoveryIntro,
};
export const FACTOR_NAME: Record<SecondFactorCheck, (t: Texts) => string> = {
  totp: (t) => t.factorTotp,
  otp_email: (t) => t.factorOtpEmail,
  otp_sms: (t) => t.factorOtpSms,
  recovery_code: (t) => t.factorRecoveryCode,
};

/** Shows the step for one factor; `send`: a code goes out first (email and SMS). */
export async function askSecondFactor(s: SignInStep, p: SignInProgress, user: UserRow, factor: SecondFactorCheck, send: boolean, status = 200, error?: string): Promise<void> {
  const { t } = s;
  const choices = await choicesOf(s, user);
  let problem = error;
  if (send && (factor === "otp_email" || factor === "otp_sms")) {
    try {
      await s.c.transact((tx) => sendSignInCode(tx, s.c.codes, { instanceId: s.c.instanceId, userId: user.id }, user, factor));
    } catch (e) {
      // The address stopped being verified meanwhile: another factor, if any, will do.
      if (!(e instanceof DomainError)) throw e;
      problem = t.codeNotSent;
    }
  }
  const action = escapeHtml(`${s.base}/mfa`);
  const fields = (extra: string) => progressFields(s, p, "mfa") + `<input type="hidden" name="factor" value="${escapeHtml(factor)}">` + extra;
  const numeric = factor === "totp" ? ' inputmode="numeric" pattern="[0-9 ]*"' : "";
  const resend =
    factor === "otp_email" || factor === "otp_sms"
      ? `<form method="post" action="${action}">${fields('<input type="hidden" name="resend" value="1">')}<button type="submit">${escapeHtml(t.sendNewCode)}</button></form>`
      : "";
  const others = choices
    .filter((c) => c !== factor)
    .map((c) => `<form method="post" action="${action}">${progressFields(s, p, "mfa")}<input type="hidden" name="factor" value="${escapeHtml(c)}"><input type="hidden" name="choose" value="1"><button type="submit">${escapeHtml(FACTOR_NAME[c](t))}</button></form>`)
    .join("");
  s.show(
    status,
    t.mfaTitle,
    (problem ? errorBody(problem) : "") +
      `<p>${escapeHtml(INTRO[factor](t))}</p><form method="post" action="${action}">${fields("")}` +
      `<label for="code">${escapeHtml(t.code)}</label><input id="code" name="code" autocomplete="one-time-code"${numeric} required autofocus>` +
      `<button type="submit">${escapeHtml(t.verify)}</button></form>` +
      resend +
      (others ? `<h2>${escapeHtml(t.mfaOtherWays)}</h2>${others}` : ""),
  );
}

/** A code, another factor chosen, or a new code asked for. A right code moves the sign-in on. */
export async function secondFactorSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const p = progressOf(s, form, "mfa");
  const user = p && (await findUserRow(c.db, c.instanceId, p.userId));
  if (!p || !user) return s.show(403, t.errorTitle, errorBody(t.formExpired));
  if (user.state !== "active") return s.askLoginName(403, "", t.userLocked);
  const factor = form.factor as SecondFactorCheck;
  if (!(await choicesOf(s, user)).includes(factor)) return s.show(400, t.errorTitle, errorBody(t.formExpired));
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "code")) return askSecondFactor(s, p, user, factor, false, 429, t.tooManyAttempts);
  if (form.choose || form.resend) return askSecondFactor(s, p, user, factor, true);
  if (!c.guards.perLoginName.take(`${c.instanceId} ${user.id}`)) {
    s.res.setHeader("retry-after", String(c.guards.perLoginName.retryAfterS()));
    return askSecondFactor(s, p, user, factor, false, 429, t.tooManyAttempts);
  }
  const { maxPasswordAttempts } = await settingsOf(c, user.org_id);
  const outcome = await c.transact((tx) => checkSecondFactor(tx, c.codes.box, user, factor, form.code ?? "", maxPasswordAttempts));
  if (outcome.locked) {
    c.accessChanged();
    return s.askLoginName(403, "", t.userLocked);
  }
  if (!outcome.ok) return askSecondFactor(s, p, user, factor, false, 400, t.codeInvalid);
  await s.proceed({ userId: user.id, amr: [...p.amr, "otp"] });
}
