import { setTimeout as sleep } from "node:timers/promises";
import { DomainError } from "../../../domain/errors.js";
import { requestPasswordReset, setPasswordWithCode } from "../../../domain/user/password-reset.js";
import type { PromptStep } from "../kit/context.js";
import { chosenPassword } from "../kit/new-password.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { buttonForm, escapeHtml, fieldError, hiddenField, links, loginNameForm, type FormError } from "../view/render.js";
import { setPasswordForm } from "./set-password-page.js";
import { userByLoginName } from "../../../domain/user/login-names.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * "Forgot password?" within a sign-in: the login name (`/reset`), then the code from the
 * email with a new password (`/resetcode`), which signs the person in. The answer to a
 * login name is the same page, no sooner than PLATFORM_PASSWORD_RESET_ANSWER_TIME, whether
 * the name exists, has an email address, or was sent a code moments ago (the per-user
 * interval): neither its words nor its timing say whether there is such an account.
 */
export function forgotPasswordPage(s: PromptStep): void {
  const loginName = (new URL(s.req.url ?? "/", "http://x").searchParams.get("loginName") ?? "").slice(0, 400);
  s.show(
    200,
    s.t.resetPasswordTitle,
    loginNameForm(s.t, { action: `${s.base}/reset`, csrf: s.csrf, loginName, submit: s.t.sendCode, intro: `<p>${escapeHtml(s.t.forgotPasswordIntro)}</p>` }) +
      links([[s.base, s.t.externalBack]]),
  );
}

export async function requestReset(s: PromptStep, form: Record<string, string>): Promise<void> {
  const started = Date.now();
  const { c, t } = s;
  const loginName = (form.loginName ?? "").slice(0, 400);
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "reset")) {
    return s.show(
      429,
      t.resetPasswordTitle,
      loginNameForm(t, { action: `${s.base}/reset`, csrf: s.csrf, loginName, submit: t.sendCode, error: t.tooManyAttempts }),
    );
  }
  const user = loginName ? await userByLoginName(c.db, c.instanceId, loginName, s.requestedOrg) : undefined;
  if (user?.state === "active") {
    await c
      .transact((tx) => requestPasswordReset(tx, pageActor(s, user.id), c.codes, user.id, false))
      // No email address, a code moments ago: nothing is sent, and nothing said.
      .catch((error: unknown) => {
        if (!(error instanceof DomainError)) throw error;
      });
  }
  await sleep(Math.max(0, c.resetAnswerMs - (Date.now() - started)));
  s.show(200, t.resetPasswordTitle, codeForm(s, loginName, ""));
}

export async function completeReset(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const loginName = (form.loginName ?? "").slice(0, 400);
  const code = (form.code ?? "").slice(0, 64);
  const again = (status: number, error: FormError, keepCode = true) =>
    s.show(status, t.resetPasswordTitle, codeForm(s, loginName, keepCode ? code : "", error));
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "code")) return again(429, t.tooManyAttempts);
  const chosen = await chosenPassword(c, s, form.password ?? "", form.passwordConfirmation);
  if ("error" in chosen) return again(400, chosen.error);
  const user = loginName && code ? await userByLoginName(c.db, c.instanceId, loginName, s.requestedOrg) : undefined;
  const set =
    user?.state === "active" ? await c.transact((tx) => setPasswordWithCode(tx, pageActor(s, user.id), c.codes, user.id, code, chosen.hash)) : undefined;
  if (!user || !set) return again(400, fieldError("code", t.codeInvalid), false);
  await s.proceed({ userId: user.id, amr: ["pwd"] });
}

/** The code and the new password, with a new code one button away and the way back to signing in. */
function codeForm(s: PromptStep, loginName: string, code: string, error?: FormError): string {
  return (
    `<p role="status">${escapeHtml(s.t.resetCodeSent)}</p>` +
    setPasswordForm(s.t, { action: `${s.base}/resetcode`, code, hidden: { csrf: s.csrf, loginName }, ...(error && { error }) }) +
    buttonForm(`${s.base}/reset`, hiddenField("csrf", s.csrf) + hiddenField("loginName", loginName), s.t.sendNewCode) +
    links([[s.base, s.t.externalBack]])
  );
}
