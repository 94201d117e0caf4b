import { escapeHtml } from "../../../http/escape-html.js";
import type { SupportedLanguage } from "../../../domain/settings/language.js";
import type { Placeholder } from "../../../domain/notification/kinds.js";
import { fill } from "../../../domain/notification/template.js";

/*
 * The HTML part: the body's paragraphs in a plain, readable layout. Inline styles only (mail
 * clients drop style sheets), no images, no external resources, no scripts: nothing that
 * loads when the message is opened, so nothing tracks its reader.
 */

const PAGE =
  "margin:0;padding:0;background:#ffffff;color:#1f1f1f;font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5";
const ARTICLE = "max-width:36em;margin:0 auto;padding:24px 16px";
const PARAGRAPH = "margin:0 0 16px";
const LINK = "color:#0b57d0;text-decoration:underline;word-break:break-all";
const CODE = "font-size:20px;letter-spacing:2px";

/** A placeholder's value in HTML: escaped; the URL a link when it is one; the code stands out. */
function htmlValue(name: Placeholder, value: string): string {
  const text = escapeHtml(value);
  if (name === "URL" && /^https?:\/\//i.test(value)) return `<a href="${text}" style="${LINK}">${text}</a>`;
  if (name === "Code") return `<strong style="${CODE}">${text}</strong>`;
  return text;
}

/** Paragraphs are separated by empty lines; a single line break stays one. */
function paragraphs(body: string, values: ReadonlyMap<string, string>): string {
  return body
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => `<p style="${PARAGRAPH}">${fill(p, values, (t) => escapeHtml(t).replaceAll("\n", "<br>"), htmlValue)}</p>`)
    .join("\n");
}

/** The whole HTML document of an email; `subject` is already rendered. */
export function emailHtml(language: SupportedLanguage, subject: string, body: string, values: ReadonlyMap<string, string>): string {
  const title = escapeHtml(subject);
  return `<!doctype html>
<html lang="${language}" dir="ltr">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light"><title>${title}</title></head>
<body style="${PAGE}">
<div role="article" aria-roledescription="email" aria-label="${title}" lang="${language}" style="${ARTICLE}">
${paragraphs(body, values)}
</div>
</body>
</html>
`;
}
