import { invalidArgument } from "../errors.js";
import type { MessageKind } from "./kinds.js";
import { KINDS, type Placeholder } from "./kinds.js";

/**
 * Texts use the placeholders of ZITADEL's Go templates, `{{.Code}}`, with the spaces Go
 * allows inside the braces (`{{ .Code }}`); nothing else of Go templates.
 */
const PLACEHOLDER = /\{\{\s*\.([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g;
const ONE_PLACEHOLDER = new RegExp(`^${PLACEHOLDER.source}$`);
/** Anything in double braces: what a writer meant as a placeholder. */
const BRACES = /\{\{[\s\S]*?\}\}/g;

/** A placeholder as written in a text. */
export const written = (name: Placeholder) => `{{.${name}}}`;

/**
 * Refuses a custom text (InvalidArgument) that names anything in double braces that is not a
 * placeholder of its kind (a typo, `{{.Code}}` in an invite), or a body without what the
 * kind is sent for: mistakes show when a text is saved, not in a user's inbox.
 */
export function checkTemplate(kind: MessageKind, part: "subject" | "body", text: string): void {
  const rules = KINDS[kind];
  for (const [braces] of text.matchAll(BRACES)) {
    const name = ONE_PLACEHOLDER.exec(braces)?.[1];
    if (!rules.placeholders.includes(name as Placeholder)) {
      throw invalidArgument(`${part}: ${braces} is no placeholder of ${kind} messages; they may use ${rules.placeholders.map(written).join(", ")}`);
    }
  }
  if (part === "body" && rules.carries.length > 0) {
    const named = new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]));
    if (!rules.carries.some((p) => named.has(p))) throw invalidArgument(`body: ${kind} messages must contain ${rules.carries.map(written).join(" or ")}`);
  }
}

/**
 * The template with every placeholder that has a value replaced by `value(name, value)` and
 * the text around them mapped by `literal`. Anything else stays as written: rendering never
 * fails on a text. One pass, so a value that looks like a placeholder stays as it is.
 */
export function fill(
  template: string,
  values: ReadonlyMap<string, string>,
  literal: (text: string) => string,
  value: (name: Placeholder, value: string) => string,
): string {
  let out = "";
  let at = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    const v = values.get(m[1]!);
    if (v === undefined) continue;
    out += literal(template.slice(at, m.index)) + value(m[1] as Placeholder, v);
    at = m.index + m[0].length;
  }
  return out + literal(template.slice(at));
}
