import { DomainError } from "../../../domain/errors.js";
import { checkSecondFactor, sendSignInCode } from "../../../domain/user-factor/checks.js";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { SecondFactorCheck } from "../../../domain/user-factor/model.js";
import { allowedFactors, type AllowedFactors } from "../../../domain/user-factor/due.js";
import { webAuthnAmr } from "../../../domain/user-webauthn/factor.js";
import { startSecondFactorCheck, verifySecondFactorCheck } from "../../../domain/user-webauthn/second-factor.js";
import type { UserRow } from "../../../store/schema.js";
import type { PromptStep, SignInProgress, SignInStep } from "../kit/context.js";
import { settingsOf } from "../kit/org-settings.js";
import { progressedUser, progressFields } from "../kit/progress.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { buttonForm, errorBody, escapeHtml, fieldError, form, hiddenField, type FormError } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { usableFactors } from "../../../domain/user-factor/queries.js";
import { webauthnCapability } from "../kit/webauthn-capability.js";
import { answerOf, keepChallenge, relyingPartyOf, takeChallenge } from "../kit/webauthn-challenges.js";
import { webauthnForm } from "../view/webauthn-form.js";
import { accountChip, otherAccountLink } from "../view/account-chip.js";
import { pageActor, recordSignIn } from "../kit/page-origin.js";
import { rowUser } from "../../../domain/audit/sign-ins.js";

/**
 * The second-factor step (`/mfa`): a code of one of the person's factors the login settings
 * allow, with the others (and a recovery code, while one is unused) one button away. Email
 * and SMS codes are sent when their factor is shown, and again on request. The checks are
 * domain/user-factor/checks.ts's, as for the session API: a wrong code counts toward the
 * lockout of wrong passwords. A security key (where `second_factors` allows U2F) or a passkey
 * (where `multi_factors` allows one) answers a WebAuthn challenge instead, kept for this
 * interaction on the server and checked by domain/user-webauthn/second-factor.ts.
 */

/** A way to verify here: a code factor, a recovery code, a security key, or a passkey. */
export type Choice = SecondFactorCheck | "passkey";

const isKey = (c: Choice): c is "u2f" | "passkey" => c === "u2f" || c === "passkey";

/** The factor the step starts with: the strongest, but a code rather than a key where the browser showed no WebAuthn (webauthn-capability.ts). */
export function firstChoice(s: Pick<SignInStep, "req">, due: AllowedFactors): Choice {
  const choices: Choice[] = due.passkey ? [...due.factors, "passkey"] : due.factors;
  const here = webauthnCapability(s.req) ? choices : choices.filter((c) => !isKey(c));
  return here[0] ?? choices[0] ?? "recovery_code";
}

/** What the person can verify with here: its allowed factors, strongest first, its passkey where allowed, then a recovery code. */
async function choicesOf(s: SignInStep, user: UserRow): Promise<Choice[]> {
  const [settings, usable] = await Promise.all([settingsOf(s.c, user.org_id), usableFactors(s.c.db, user)]);
  const allowed = allowedFactors(usable, settings);
  const choices: Choice[] = allowed.passkey ? [...allowed.factors, "passkey"] : allowed.factors;
  return usable.recoveryCodes > 0 ? [...choices, "recovery_code"] : choices;
}

const INTRO: Record<Choice, (t: Texts) => string> = {
  totp: (t) => t.mfaTotpIntro,
  u2f: (t) => t.mfaSecurityKeyIntro,
  passkey: (t) => t.mfaPasskeyIntro,
  otp_email: (t) => t.mfaEmailIntro,
  otp_sms: (t) => t.mfaSmsIntro,
  recovery_code: (t) => t.mfaRecoveryIntro,
};
export const FACTOR_NAME: Record<Choice, (t: Texts) => string> = {
  totp: (t) => t.factorTotp,
  u2f: (t) => t.factorSecurityKey,
  passkey: (t) => t.factorPasskey,
  otp_email: (t) => t.factorOtpEmail,
  otp_sms: (t) => t.factorOtpSms,
  recovery_code: (t) => t.factorRecoveryCode,
};

const sends = (factor: Choice): factor is "otp_email" | "otp_sms" => factor === "otp_email" || factor === "otp_sms";

/** Shows the step for one factor; `send`: a code goes out first (email and SMS). */
export async function askSecondFactor(
  s: SignInStep,
  p: SignInProgress,
  user: UserRow,
  factor: Choice,
  send: boolean,
  status = 200,
  error?: FormError,
): Promise<void> {
  const { t } = s;
  const choices = await choicesOf(s, user);
  let problem = error;
  if (send && sends(factor)) {
    try {
      await s.c.transact((tx) => sendSignInCode(tx, s.c.codes, pageActor(s, user.id), user, factor));
    } catch (e) {
      // The address stopped being verified meanwhile: another factor, if any, will do.
      if (!(e instanceof DomainError)) throw e;
      problem = t.codeNotSent;
    }
  }
  const action = `${s.base}/mfa`;
  const hidden = progressFields(s, p, "mfa") + hiddenField("factor", factor);
  const attrs = factor === "totp" ? ' inputmode="numeric" pattern="[0-9 ]*"' : ' autocapitalize="none" spellcheck="false"';
  const resend = sends(factor) ? buttonForm(action, hidden + hiddenField("resend", "1"), t.sendNewCode) : "";
  const others = choices
    .filter((c) => c !== factor)
    .map((c) => buttonForm(action, progressFields(s, p, "mfa") + hiddenField("factor", c) + hiddenField("choose", "1"), FACTOR_NAME[c](t)))
    .join("");
  const main = isKey(factor)
    ? await keyForm(s, p, user, factor, hidden, problem)
    : form({
        action,
        hidden,
        intro: `<p>${escapeHtml(INTRO[factor](t))}</p>`,
        fields: [{ name: "code", label: t.code, autocomplete: "one-time-code", attrs, autofocus: true }],
        submit: t.verify,
        ...(problem && { error: problem }),
      });
  // A key the only way, in a browser that cannot use it here: say what can be done rather than leave a dead end.
  const onlyKeys = choices.every(isKey) && !webauthnCapability(s.req) ? `<p class="muted">${escapeHtml(t.mfaOnlyKey)}</p>` : "";
  s.show(
    status,
    t.mfaTitle,
    (await accountChip(s, user.id)) + main + resend + (others ? `<h2>${escapeHtml(t.mfaOtherWays)}</h2>${others}` : "") + onlyKeys + otherAccountLink(s),
  );
}

/** A security key's or passkey's step: a new challenge for the person's keys, kept for this interaction, and the form that answers it. */
async function keyForm(
  s: SignInStep,
  p: SignInProgress,
  user: UserRow,
  factor: "u2f" | "passkey",
  hidden: string,
  problem: FormError | undefined,
): Promise<string> {
  const { t } = s;
  const message = typeof problem === "object" ? problem.message : problem;
  const settings = await settingsOf(s.c, user.org_id);
  let started;
  try {
    started = await startSecondFactorCheck(s.c.db, user, settings, relyingPartyOf(s.c));
  } catch (e) {
    // Served on a host that is no domain of the instance: its keys cannot answer here.
    if (!(e instanceof DomainError)) throw e;
    return errorBody(t.webauthnInvalid);
  }
  await keepChallenge(s, "mfa", { pending: started.pending, userId: user.id });
  return (
    (message ? errorBody(message) : "") +
    `<p>${escapeHtml(INTRO[factor](t))}</p>` +
    webauthnForm(t, { ceremony: "get", id: "second-factor-key", action: `${s.base}/mfa`, hidden, options: started.options, button: t.verify, explain: true })
  );
}

/** A code, another factor chosen, or a new code asked for. A right code moves the sign-in on. */
export async function secondFactorSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const at = await progressedUser(s, form, "mfa");
  if (!at) return;
  const { p, user } = at;
  const factor = form.factor as Choice;
  if (!(await choicesOf(s, user)).includes(factor)) return s.show(400, t.errorTitle, errorBody(t.formExpired));
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "code")) return askSecondFactor(s, p, user, factor, false, 429, t.tooManyAttempts);
  const again = Boolean(form.choose || form.resend);
  // A guess, or a code sent (each email or SMS costs, whatever address asks): the person's budget too.
  const wait = !again || sends(factor) ? c.guards.perLoginName.refusal(`${c.instanceId} ${user.id}`) : undefined;
  if (wait !== undefined) {
    s.res.setHeader("retry-after", String(wait));
    return askSecondFactor(s, p, user, factor, false, 429, t.tooManyAttempts);
  }
  if (again) return askSecondFactor(s, p, user, factor, true);
  if (isKey(factor)) return keySubmit(s, p, user, factor, form);
  const { maxPasswordAttempts } = await settingsOf(c, user.org_id);
  const outcome = await c.transact((tx) => checkSecondFactor(tx, c.codes.box, user, factor, form.code ?? "", maxPasswordAttempts));
  recordSignIn(s, { method: factor, outcome: outcome.ok ? "succeeded" : "wrong_code", user: rowUser(user) });
  if (outcome.locked) {
    c.accessChanged();
    return s.askLoginName(403, "", t.userLocked);
  }
  if (!outcome.ok) return askSecondFactor(s, p, user, factor, false, 400, fieldError("code", t.codeInvalid));
  await s.proceed({ ...p, amr: [...p.amr, "otp"] });
}

/** The answer to the key step's challenge: taken once; a wrong one counts toward the lockout as a wrong code does. */
async function keySubmit(s: PromptStep, p: SignInProgress, user: UserRow, factor: "u2f" | "passkey", form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const kept = await takeChallenge(s, "mfa");
  const answer = answerOf<AuthenticationResponseJSON>(form);
  if (!kept || kept.userId !== user.id || !answer) return askSecondFactor(s, p, user, factor, false, 400, t.webauthnInvalid);
  const settings = await settingsOf(c, user.org_id);
  const checked = await c.transact((tx) => verifySecondFactorCheck(tx, c.guards.loginSettings, settings, user, kept.pending, answer));
  recordSignIn(s, { method: "webauthn", outcome: checked.ok ? "succeeded" : checked.refusal, user: rowUser(user) });
  if (!checked.ok && checked.locked) {
    c.accessChanged();
    return s.askLoginName(403, "", t.userLocked);
  }
  if (!checked.ok) return askSecondFactor(s, p, user, factor, false, 400, t.webauthnInvalid);
  await s.proceed({ ...p, amr: [...p.amr, ...webAuthnAmr(checked.factor)] });
}
