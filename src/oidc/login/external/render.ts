import { errorBody, escapeHtml } from "../render.js";
import type { Texts } from "../texts/index.js";

/**
 * The HTML of external login: a button per identity provider under the login-name form, the
 * linking and creation forms. Plain forms as the other pages (no scripts), with the stable
 * field names `loginName`, `password`, `username`, `givenName`, `familyName`, `email`.
 */

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

function field(id: string, label: string, value: string, attrs = "") {
  return `<label for="${id}">${escapeHtml(label)}</label><input id="${id}" name="${id}" value="${escapeHtml(value)}" required${attrs ? ` ${attrs}` : ""}>`;
}

/** One form per provider, posting its id: a button that starts the upstream login. */
export function providerButtons(t: Texts, action: string, csrf: string, providers: { id: string; name: string }[]): string {
  return providers
    .map(
      (p) =>
        `<form method="post" action="${escapeHtml(action)}">${hidden("csrf", csrf)}${hidden("idpId", p.id)}` +
        `<button type="submit">${escapeHtml(t.externalSignInWith.replace("{name}", p.name))}</button></form>`,
    )
    .join("");
}

export function backLink(t: Texts, href: string): string {
  return `<p><a href="${escapeHtml(href)}">${escapeHtml(t.externalBack)}</a></p>`;
}

/**
 * Linking with a password. `fixedLoginName`: the proposed account, which is the only one that
 * may be linked (the name is shown, not asked); otherwise the person names the account.
 */
export function linkForm(t: Texts, form: { action: string; csrf: string; loginName: string; fixed: boolean; intro: string; error?: string }): string {
  const name = form.fixed
    ? `<p class="muted">${escapeHtml(form.loginName)}</p>${hidden("loginName", form.loginName)}`
    : field("loginName", t.loginName, form.loginName, 'autocomplete="username"');
  return `${form.error ? errorBody(form.error) : ""}<p>${escapeHtml(form.intro)}</p>` +
    `<form method="post" action="${escapeHtml(form.action)}">${hidden("csrf", form.csrf)}${name}` +
    `<label for="password">${escapeHtml(t.password)}</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>` +
    `<button type="submit">${escapeHtml(t.externalLink)}</button></form>`;
}

export interface NewAccountFields {
  username: string;
  givenName: string;
  familyName: string;
  email: string;
}

/** A new account from the provider's claims, which the person confirms or corrects. */
export function createForm(t: Texts, form: { action: string; csrf: string; values: NewAccountFields; error?: string }): string {
  const v = form.values;
  return `${form.error ? errorBody(form.error) : ""}<form method="post" action="${escapeHtml(form.action)}">${hidden("csrf", form.csrf)}` +
    field("username", t.externalUsername, v.username, 'autocomplete="username"') +
    field("givenName", t.externalGivenName, v.givenName, 'autocomplete="given-name"') +
    field("familyName", t.externalFamilyName, v.familyName, 'autocomplete="family-name"') +
    field("email", t.externalEmail, v.email, 'type="email" autocomplete="email"') +
    `<button type="submit">${escapeHtml(t.externalCreate)}</button></form>`;
}

/** What a person without a linked account may do: links to the pages the provider's options allow. */
export function choices(t: Texts, links: { href: string; label: string }[], message: string): string {
  return `<p>${escapeHtml(message)}</p>` + links.map((l) => `<p><a href="${escapeHtml(l.href)}">${escapeHtml(l.label)}</a></p>`).join("");
}
