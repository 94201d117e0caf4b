import { setPasswordWithCode } from "../../../domain/user/password-reset.js";
import { ACCEPT_INVITE_PATH } from "../kit/code-links.js";
import { codePageAction, postedCodeForm, type CodePage } from "../kit/code-page-form.js";
import { chosenPassword } from "../kit/new-password.js";
import { escapeHtml, fieldError, form as formHtml, hiddenField, type FormError } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * Where the links of `password_reset` and `invite` messages land: the code (filled in from
 * the link), a new password and its confirmation. Submitted, it sets the password under the
 * instance's policy; an invitation verifies the email address too. Every refusal of the code
 * reads the same ("the code is not valid"), and tries count per address.
 */
export async function setPasswordPage(p: CodePage): Promise<void> {
  const { c, t } = p;
  const invite = p.path === ACCEPT_INVITE_PATH;
  const title = invite ? t.acceptInviteTitle : t.resetPasswordTitle;
  const form = (userId: string, code: string, error?: FormError) =>
    setPasswordForm(t, {
      action: codePageAction(p.path, userId, p.asked.returnTo),
      intro: invite ? t.acceptInviteIntro : t.resetPasswordIntro,
      userId,
      code,
      ...(error && { error }),
    });
  if (p.req.method === "GET") return p.show(200, title, form(p.asked.user, p.asked.code));
  const posted = await postedCodeForm(p, title, (f) => form(f.user ?? "", f.code ?? ""));
  if (!posted) return;
  const { userId, code } = posted;
  const again = (status: number, error: FormError, keepCode = true) => p.show(status, title, form(posted.form.user ?? "", keepCode ? code : "", error));
  const chosen = await chosenPassword(c, p, posted.form.password ?? "", posted.form.passwordConfirmation);
  if ("error" in chosen) return again(400, chosen.error);
  const set = userId && code ? await c.transact((tx) => setPasswordWithCode(tx, pageActor(p, userId), c.codes, userId, code, chosen.hash)) : undefined;
  if (!set) return again(400, fieldError("code", t.codeInvalid), false);
  const onward = p.asked.returnTo ? `<p class="links"><a href="${escapeHtml(p.asked.returnTo)}">${escapeHtml(t.continueOnward)}</a></p>` : "";
  p.show(200, title, `<p role="status">${escapeHtml(t.passwordSet)}</p>${onward}`);
}

/** The code and a new password twice, under the names custom themes rely on: `code`, `password`, `passwordConfirmation`. */
export function setPasswordForm(
  t: Texts,
  f: { action: string; intro?: string; userId?: string; code: string; hidden?: Record<string, string>; error?: FormError },
): string {
  const hidden = { ...(f.userId !== undefined && { user: f.userId.slice(0, 200) }), ...f.hidden };
  return formHtml({
    action: f.action,
    hidden: Object.entries(hidden)
      .map(([name, value]) => hiddenField(name, value))
      .join(""),
    ...(f.intro && { intro: `<p>${escapeHtml(f.intro)}</p>` }),
    fields: [
      // The first empty field has the focus: the code, unless a message's link filled it in.
      {
        name: "code",
        label: t.code,
        autocomplete: "one-time-code",
        value: f.code.slice(0, 64),
        attrs: ' autocapitalize="none" spellcheck="false"',
        autofocus: f.code === "",
      },
      { name: "password", label: t.newPassword, type: "password", autocomplete: "new-password", autofocus: f.code !== "" },
      { name: "passwordConfirmation", label: t.confirmPassword, type: "password", autocomplete: "new-password" },
    ],
    submit: t.setPassword,
    ...(f.error && { error: f.error }),
  });
}
