import { DomainError } from "../../../domain/errors.js";
import { requestVerification, verifyContact } from "../../../domain/user/verification.js";
import type { PromptStep, SignInProgress, SignInStep } from "../kit/context.js";
import { progressFields, progressOf } from "../kit/progress.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { buttonForm, errorBody, escapeHtml, fieldError, form, hiddenField, type FormError } from "../view/render.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * The email verification step of a sign-in, when the login settings say
 * `require_verified_email`: after the first factors (sign-in.ts) a person whose address is
 * not verified gets a code and must give it before the login finishes. The forms carry the
 * sign-in's progress under its proof (progress.ts).
 */

/** Sends a code (unless `send` is false) and asks for it. */
export async function askEmailCode(s: SignInStep, p: SignInProgress, send: boolean, status = 200, error?: FormError): Promise<void> {
  const { userId } = p;
  if (send) {
    await s.c
      .transact((tx) => requestVerification(tx, pageActor(s, userId), s.c.codes, userId, "email", false))
      // Verified meanwhile, or no address any more: the code's check below says so.
      .catch((e: unknown) => {
        if (!(e instanceof DomainError)) throw e;
      });
  }
  const hidden = progressFields(s, p, "verifyemail");
  const action = `${s.base}/verifyemail`;
  s.show(
    status,
    s.t.verifyEmailTitle,
    form({
      action,
      hidden,
      intro: `<p>${escapeHtml(s.t.verifyEmailIntro)}</p>`,
      fields: [{ name: "code", label: s.t.code, autocomplete: "one-time-code", attrs: ' autocapitalize="none" spellcheck="false"', autofocus: true }],
      submit: s.t.verify,
      ...(error && { error }),
    }) + buttonForm(action, hidden + hiddenField("resend", "1"), s.t.sendCode),
  );
}

/** The code (or a request for another one) of the step; a right code finishes the login. */
export async function emailCodeSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const p = progressOf(s, form, "verifyemail");
  if (!p) return s.show(403, s.t.errorTitle, errorBody(s.t.formExpired));
  const { userId } = p;
  if (!takeAddressTry(s.c.guards.perIp, s.req, s.res, s.c.instanceId, "code")) return askEmailCode(s, p, false, 429, s.t.tooManyAttempts);
  if (form.resend) return askEmailCode(s, p, true);
  const code = (form.code ?? "").slice(0, 64);
  const verified = code ? await s.c.transact((tx) => verifyContact(tx, pageActor(s, userId), s.c.codes, userId, "email", code)) : undefined;
  if (!verified) return askEmailCode(s, p, false, 400, fieldError("code", s.t.codeInvalid));
  await s.proceed(p);
}
