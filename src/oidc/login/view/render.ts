import { escapeHtml } from "../../../http/escape-html.js";
import type { Frame, Look } from "./look.js";
import { stylesheet } from "./stylesheet.js";
import { TEXTS, type Texts } from "./texts/index.js";

// The pages' view kit hands the escape to every page with the rest of its HTML helpers.
export { escapeHtml };

/** The name the watermark gives, unless the branding disables it. */
export const PRODUCT_NAME = "Platform Identity";

/** A text with `{app}` in it, the application's name in bold. */
function withApp(template: string, app: string): string {
  const [before = "", after = ""] = template.split("{app}");
  return `${escapeHtml(before)}<strong>${escapeHtml(app)}</strong>${escapeHtml(after)}`;
}

/** The organization's logo (its dark variant in dark mode), else the instance's name. */
function brand(look: Look): string {
  const light = look.branding.logoUrl ?? look.branding.logoDarkUrl;
  const dark = look.branding.logoDarkUrl ?? look.branding.logoUrl;
  if (!light || !dark) return `<div class="brand">${escapeHtml(look.name)}</div>`;
  const source = dark !== light ? `<source media="(prefers-color-scheme: dark)" srcset="${escapeHtml(dark)}">` : "";
  return `<div class="brand"><picture>${source}<img src="${escapeHtml(light)}" alt="${escapeHtml(look.name)}"></picture></div>`;
}

/** The icon of the tab: the branding's, else none (an empty data URL: no request for /favicon.ico). */
function icons(look: Look): string {
  const light = look.branding.iconUrl ?? look.branding.iconDarkUrl;
  const dark = look.branding.iconDarkUrl;
  if (!light) return '<link rel="icon" href="data:,">';
  return (
    `<link rel="icon" href="${escapeHtml(light)}">` +
    (dark && dark !== light ? `<link rel="icon" href="${escapeHtml(dark)}" media="(prefers-color-scheme: dark)">` : "")
  );
}

/**
 * A whole page: a centred card with the logo, the title as its heading, the application the
 * person signs in to, the content, and the watermark under it. No script, no resource from
 * elsewhere (the logo and icon are the service's own), so a strict CSP holds.
 */
export function page(frame: Frame, title: string, body: string): string {
  const { look } = frame;
  const t = TEXTS[frame.lang];
  const app = look.appName ? `<p class="app">${withApp(t.appContext, look.appName)}</p>` : "";
  const footer = look.branding.disableWatermark ? "" : `<footer><p>${escapeHtml(t.securedBy.replace("{name}", PRODUCT_NAME))}</p></footer>`;
  return (
    `<!doctype html><html lang="${frame.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light dark">` +
    `<title>${escapeHtml(title)}</title>${icons(look)}<style>${stylesheet(look.branding)}</style></head>` +
    `<body><main>${brand(look)}<h1>${escapeHtml(title)}</h1>${app}<div class="content">${body}</div></main>${footer}</body></html>`
  );
}

/** An error about the page or the whole form, announced (role=alert). */
export function errorBody(message: string): string {
  return `<p class="error" role="alert">${escapeHtml(message)}</p>`;
}

/** An error about one field: shown next to it, and announced in the summary above the form. */
export interface FieldError {
  field: string;
  message: string;
}

/** What a form says went wrong: a message about the whole form, or about one of its fields. */
export type FormError = string | FieldError;

export const fieldError = (field: string, message: string): FieldError => ({ field, message });

export interface Field {
  /** Its id and its name in the form (stable: people's test automation and custom themes rely on them). */
  name: string;
  label: string;
  /** `text` when absent. */
  type?: string;
  autocomplete: string;
  value?: string;
  /** More attributes, e.g. ` inputmode="numeric"`. */
  attrs?: string;
  autofocus?: boolean;
  /** What the field needs, under it before anything is typed (a new password's rules). */
  hint?: string;
}

export const hiddenField = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/**
 * The error summary above a form, and the form's fields. An error about a field is shown
 * next to it (its input aria-invalid, described by the message) and has the focus; the
 * summary then says it to screen readers only, so the page does not show it twice. Every
 * other error is shown in the summary.
 */
function formParts(fields: Field[], error: FormError | undefined): { summary: string; fields: string } {
  const bad = typeof error === "object" && fields.some((f) => f.name === error.field) ? error : undefined;
  const message = typeof error === "string" ? error : error?.message;
  const summary = message === undefined ? "" : bad ? `<div class="sr-only">${errorBody(message)}</div>` : errorBody(message);
  const html = fields
    .map((f) => {
      const invalid = bad?.field === f.name;
      const focus = bad ? invalid : f.autofocus;
      const described = [...(invalid ? [`${f.name}-error`] : []), ...(f.hint ? [`${f.name}-hint`] : [])];
      return (
        `<div class="field"><label for="${f.name}">${escapeHtml(f.label)}</label>` +
        `<input id="${f.name}" name="${f.name}"${f.type ? ` type="${f.type}"` : ""} autocomplete="${f.autocomplete}"${f.attrs ?? ""} required${focus ? " autofocus" : ""}` +
        `${f.value === undefined ? "" : ` value="${escapeHtml(f.value)}"`}${invalid ? ' aria-invalid="true"' : ""}${described.length > 0 ? ` aria-describedby="${described.join(" ")}"` : ""}>` +
        (invalid ? `<p class="field-error" id="${f.name}-error">${escapeHtml(bad.message)}</p>` : "") +
        (f.hint ? `<p class="hint muted" id="${f.name}-hint">${escapeHtml(f.hint)}</p>` : "") +
        "</div>"
      );
    })
    .join("");
  return { summary, fields: html };
}

interface FormSpec {
  action: string;
  /** Hidden inputs' HTML (the form token, a step's progress). */
  hidden: string;
  fields: Field[];
  submit: string;
  error?: FormError;
  /** HTML between the summary and the form (an introduction). */
  intro?: string;
}

/** A form whose fields a person fills in, with its primary button. */
export function form(f: FormSpec): string {
  const parts = formParts(f.fields, f.error);
  return `${parts.summary}${f.intro ?? ""}<form method="post" action="${escapeHtml(f.action)}">${f.hidden}${parts.fields}<button type="submit">${escapeHtml(f.submit)}</button></form>`;
}

/** A secondary action: a form of one button (a new code, another factor, skip). */
export function buttonForm(action: string, hidden: string, label: string): string {
  return `<form class="alt" method="post" action="${escapeHtml(action)}">${hidden}<button type="submit">${escapeHtml(label)}</button></form>`;
}

/**
 * A way out that is no choice among the others ("Skip for now", "Not now"): a form whose
 * button reads as a link, and what choosing it means (`note`) right under it.
 */
export function quietForm(action: string, hidden: string, label: string, note?: string): string {
  return `<form class="quiet" method="post" action="${escapeHtml(action)}">${hidden}<button type="submit">${escapeHtml(label)}</button>${note ? `<p class="muted">${escapeHtml(note)}</p>` : ""}</form>`;
}

/** A duration as the language says "in 7 days" (or hours, or minutes: the largest whole unit). */
export function inDuration(lang: string, ms: number): string {
  const format = new Intl.RelativeTimeFormat(lang, { numeric: "always" });
  const days = Math.floor(ms / 86_400_000);
  if (days >= 1) return format.format(days, "day");
  const hours = Math.floor(ms / 3_600_000);
  return hours >= 1 ? format.format(hours, "hour") : format.format(Math.max(1, Math.round(ms / 60_000)), "minute");
}

/** Links under a form ("Forgot password?", "Use another account", "Register"). */
export function links(list: [href: string, label: string][]): string {
  return list.length === 0 ? "" : `<p class="links">${list.map(([href, label]) => `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`).join("")}</p>`;
}

/** Other ways to sign in (identity providers, a passkey) under a divider, when there are any. */
export function alternatives(t: Texts, html: string): string {
  return html ? `<p class="or">${escapeHtml(t.or)}</p>${html}` : "";
}

/**
 * A login name as the pages show it: without "@<domain>" when the branding hides the suffix
 * (`username` is the part before it); the forms still carry the whole name.
 */
export function shownLoginName(look: Look, loginName: string, username: string): string {
  return look.branding.hideLoginNameSuffix ? username : loginName;
}

export interface FormParts {
  action: string;
  csrf: string;
  error?: FormError;
}

export function loginNameForm(t: Texts, f: FormParts & { loginName: string; submit?: string; intro?: string }): string {
  return form({
    action: f.action,
    hidden: hiddenField("csrf", f.csrf),
    fields: [
      {
        name: "loginName",
        label: t.loginName,
        autocomplete: "username",
        value: f.loginName,
        attrs: ' autocapitalize="none" spellcheck="false"',
        autofocus: true,
      },
    ],
    submit: f.submit ?? t.next,
    ...(f.intro && { intro: f.intro }),
    ...(f.error && { error: f.error }),
  });
}

/** "Forgot password?" of an interaction's password page, with the login name filled in. */
export const forgotPasswordLink = (base: string, loginName: string) => `${base}/reset?${new URLSearchParams({ loginName })}`;

/**
 * The password step: whose account (as the branding shows login names), the password, and
 * the ways out. The login name travels in a hidden field for the password manager too.
 */
export function passwordForm(t: Texts, f: FormParts & { loginName: string; shownName: string; otherAccount: string; forgotPassword: string }): string {
  return (
    `<p class="account">${escapeHtml(f.shownName)}</p>` +
    form({
      action: f.action,
      hidden: hiddenField("csrf", f.csrf) + `<input type="hidden" name="loginName" value="${escapeHtml(f.loginName)}" autocomplete="username">`,
      fields: [{ name: "password", label: t.password, type: "password", autocomplete: "current-password", autofocus: true }],
      submit: t.signIn,
      ...(f.error && { error: f.error }),
    }) +
    links([
      [f.forgotPassword, t.forgotPassword],
      [f.otherAccount, t.otherAccount],
    ])
  );
}
