import type { Language, Texts } from "./texts/index.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem;color:#222}" +
  "label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}" +
  "button{margin-top:1.25rem;padding:.5rem 1rem}.error{color:#b00020}.muted{color:#666}";

/** A whole page: no scripts, no external resources, so a strict CSP holds. */
export function page(lang: Language, title: string, body: string): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

export interface FormParts {
  action: string;
  csrf: string;
  error?: string;
}

function errorLine(error: string | undefined): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";
}

export function loginNameForm(t: Texts, form: FormParts & { loginName: string; submit?: string }): string {
  return `${errorLine(form.error)}<form method="post" action="${escapeHtml(form.action)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">` +
    `<label for="loginName">${escapeHtml(t.loginName)}</label>` +
    `<input id="loginName" name="loginName" autocomplete="username" required autofocus value="${escapeHtml(form.loginName)}">` +
    `<button type="submit">${escapeHtml(form.submit ?? t.next)}</button></form>`;
}

/** "Forgot password?" of an interaction's password page, with the login name filled in. */
export const forgotPasswordLink = (base: string, loginName: string) => `${base}/reset?${new URLSearchParams({ loginName })}`;

export function passwordForm(t: Texts, form: FormParts & { loginName: string; otherAccount: string; forgotPassword: string }): string {
  return `${errorLine(form.error)}<p class="muted">${escapeHtml(form.loginName)}</p>` +
    `<form method="post" action="${escapeHtml(form.action)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">` +
    `<input type="hidden" name="loginName" value="${escapeHtml(form.loginName)}" autocomplete="username">` +
    `<label for="password">${escapeHtml(t.password)}</label>` +
    `<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>` +
    `<button type="submit">${escapeHtml(t.signIn)}</button></form>` +
    `<p><a href="${escapeHtml(form.forgotPassword)}">${escapeHtml(t.forgotPassword)}</a></p>` +
    `<p><a href="${escapeHtml(form.otherAccount)}">${escapeHtml(t.otherAccount)}</a></p>`;
}

export function errorBody(message: string): string {
  return `<p class="error" role="alert">${escapeHtml(message)}</p>`;
}
