import { buttonForm, escapeHtml, form, hiddenField, links, type Field, type FormError } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";

/**
 * The HTML of external login: a button per identity provider under the login-name form, the
 * linking and creation forms. Plain forms as the other pages (no scripts), with the stable
 * field names `loginName`, `password`, `username`, `givenName`, `familyName`, `email`.
 */

/** One form per provider, posting its id: a button that starts the upstream login. */
export function providerButtons(t: Texts, action: string, csrf: string, providers: { id: string; name: string }[]): string {
  return providers
    .map((p) => buttonForm(action, hiddenField("csrf", csrf) + hiddenField("idpId", p.id), t.externalSignInWith.replace("{name}", p.name)))
    .join("");
}

/** An LDAP provider's sign-in: the directory's login name and password, posted to the service, never to the directory's own pages. */
export function ldapForm(t: Texts, f: { action: string; csrf: string; idpId: string; loginName: string; error?: FormError }): string {
  return form({
    action: f.action,
    hidden: hiddenField("csrf", f.csrf) + hiddenField("idpId", f.idpId),
    fields: [
      { name: "loginName", label: t.loginName, autocomplete: "username", value: f.loginName, autofocus: f.loginName === "" },
      { name: "password", label: t.password, type: "password", autocomplete: "current-password", autofocus: f.loginName !== "" },
    ],
    submit: t.next,
    ...(f.error && { error: f.error }),
  });
}

export function backLink(t: Texts, href: string): string {
  return links([[href, t.externalBack]]);
}

/**
 * Linking with a password. `fixed`: the proposed account, which is the only one that may be
 * linked (its name is shown, as `shownName`, not asked); otherwise the person names the account.
 */
export function linkForm(
  t: Texts,
  f: { action: string; csrf: string; loginName: string; shownName: string; fixed: boolean; intro: string; error?: FormError },
): string {
  const fields: Field[] = [
    ...(f.fixed ? [] : [{ name: "loginName", label: t.loginName, autocomplete: "username", value: f.loginName }]),
    { name: "password", label: t.password, type: "password", autocomplete: "current-password", autofocus: true },
  ];
  return form({
    action: f.action,
    hidden: hiddenField("csrf", f.csrf) + (f.fixed ? hiddenField("loginName", f.loginName) : ""),
    intro: `<p>${escapeHtml(f.intro)}</p>` + (f.fixed ? `<p class="account">${escapeHtml(f.shownName)}</p>` : ""),
    fields,
    submit: t.externalLink,
    ...(f.error && { error: f.error }),
  });
}

export interface NewAccountFields {
  username: string;
  givenName: string;
  familyName: string;
  email: string;
}

/** A new account from the provider's claims, which the person confirms or corrects. */
export function createForm(t: Texts, f: { action: string; csrf: string; values: NewAccountFields; error?: FormError }): string {
  const v = f.values;
  return form({
    action: f.action,
    hidden: hiddenField("csrf", f.csrf),
    fields: [
      { name: "username", label: t.externalUsername, autocomplete: "username", value: v.username, autofocus: true },
      { name: "givenName", label: t.externalGivenName, autocomplete: "given-name", value: v.givenName },
      { name: "familyName", label: t.externalFamilyName, autocomplete: "family-name", value: v.familyName },
      { name: "email", label: t.externalEmail, type: "email", autocomplete: "email", value: v.email },
    ],
    submit: t.externalCreate,
    ...(f.error && { error: f.error }),
  });
}

/** What a person without a linked account may do: links to the pages the provider's options allow. */
export function choices(t: Texts, list: { href: string; label: string }[], message: string): string {
  return `<p>${escapeHtml(message)}</p>` + list.map((l) => `<p><a href="${escapeHtml(l.href)}">${escapeHtml(l.label)}</a></p>`).join("");
}
