import { verifyContact } from "../../../domain/user/verification.js";
import { VERIFY_EMAIL_PATH } from "../kit/code-links.js";
import { codePageAction, postedCodeForm, type CodePage } from "../kit/code-page-form.js";
import { escapeHtml, fieldError, form, hiddenField, type FormError } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * Where the link of a `verify_email` message lands: a form with the code filled in, which
 * the person submits (a GET never verifies: mail scanners open links). Attempts count per
 * address like passwords, and every refusal reads the same ("the code is not valid").
 */
export async function verifyEmailPage(p: CodePage): Promise<void> {
  const { c, t } = p;
  if (p.req.method === "GET") return p.show(200, t.verifyEmailTitle, verifyForm(t, p.asked.user, p.asked.code));
  const posted = await postedCodeForm(p, t.verifyEmailTitle, (form) => verifyForm(t, form.user ?? "", form.code ?? ""));
  if (!posted) return;
  const { userId, code } = posted;
  const verified = userId && code ? await c.transact((tx) => verifyContact(tx, pageActor(p, userId), c.codes, userId, "email", code)) : undefined;
  if (!verified) return p.show(400, t.verifyEmailTitle, verifyForm(t, posted.form.user ?? "", "", fieldError("code", t.codeInvalid)));
  p.show(200, t.verifyEmailTitle, `<p role="status">${escapeHtml(t.emailVerified)}</p>`);
}

function verifyForm(t: Texts, userId: string, code: string, error?: FormError): string {
  return form({
    action: codePageAction(VERIFY_EMAIL_PATH, userId),
    hidden: hiddenField("user", userId.slice(0, 200)),
    intro: `<p>${escapeHtml(t.verifyEmailIntro)}</p>`,
    fields: [
      {
        name: "code",
        label: t.code,
        autocomplete: "one-time-code",
        value: code.slice(0, 64),
        attrs: ' autocapitalize="none" spellcheck="false"',
        autofocus: true,
      },
    ],
    submit: t.verify,
    ...(error && { error }),
  });
}
