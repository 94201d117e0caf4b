import type { Branding } from "../../../domain/settings/branding.js";
import { invalidArgument } from "../../../domain/errors.js";
import type { Look } from "./look.js";
import { links, loginNameForm, page } from "./render.js";
import { TEXTS, type Language } from "./texts/index.js";

/** The language a preview is asked in: one of the pages' own, English when none is named. */
export function previewLanguage(asked: string): Language {
  if (asked === "") return "en";
  if (!Object.hasOwn(TEXTS, asked)) throw invalidArgument(`language: "${asked}" is none of the login pages' languages (${Object.keys(TEXTS).join(", ")})`);
  return asked as Language;
}

/**
 * The first page of a sign-in as it would look with `branding`: the same page function, form
 * and links as an interaction's, with an example application. Its form goes nowhere real (no
 * interaction stands behind it), so it carries no token.
 */
export function previewPage(branding: Branding, instanceName: string, lang: Language): string {
  const t = TEXTS[lang];
  const look: Look = { branding, name: instanceName, instanceName, appName: "Example App" };
  const body =
    loginNameForm(t, { action: "#", csrf: "", loginName: "" }) +
    links([
      ["#", t.forgotPassword],
      ["#", t.registerLink],
    ]);
  return page({ lang, look }, t.signInTitle, body);
}
