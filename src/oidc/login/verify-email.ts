import { verifyContact } from "../../domain/user/verification.js";
import { VERIFY_EMAIL_PATH } from "./code-links.js";
import { codePageAction, postedCodeForm, type CodePage } from "./code-pages.js";
import { errorBody, escapeHtml } from "./render.js";
import type { Texts } from "./texts/index.js";

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
  const verified = userId && code ? await c.transact((tx) => verifyContact(tx, { instanceId: c.instanceId, userId }, c.codes, userId, "email", code)) : undefined;
  if (!verified) return p.show(400, t.verifyEmailTitle, errorBody(t.codeInvalid) + verifyForm(t, posted.form.user ?? "", ""));
  p.show(200, t.verifyEmailTitle, `<p role="status">${escapeHtml(t.emailVerified)}</p>`);
}

function verifyForm(t: Texts, userId: string, code: string): string {
  return `<p>${escapeHtml(t.verifyEmailIntro)}</p>` +
    `<form method="post" action="${escapeHtml(codePageAction(VERIFY_EMAIL_PATH, userId))}">` +
    `<input type="hidden" name="user" value="${escapeHtml(userId.slice(0, 200))}">` +
    `<label for="code">${escapeHtml(t.code)}</label>` +
    `<input id="code" name="code" autocomplete="one-time-code" required autofocus value="${escapeHtml(code.slice(0, 64))}">` +
    `<button type="submit">${escapeHtml(t.verify)}</button></form>`;
}
