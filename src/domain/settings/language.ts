import type { Db, Tx } from "../../store/db.js";
import { failedPrecondition, invalidArgument } from "../errors.js";
import type { PropertyDefinition, Resolved, SettingsKind } from "./kind.js";
import { resolveSettings } from "./rows.js";

/**
 * The languages the service ships texts and login pages for, in the order they are
 * offered. Fixed by the system.
 */
export const SUPPORTED_LANGUAGES = ["en", "de", "fr", "it", "es", "pt", "nl", "pl", "ja", "zh"] as const;
export type SupportedLanguage = (typeof SUPPORTED_LANGUAGES)[number];

const EVERYWHERE = new Set(["system", "instance", "org"] as const);

/** Messages name the property (the request's field) and the language. */
export function checkSupported(field: string, language: string): asserts language is SupportedLanguage {
  if (!(SUPPORTED_LANGUAGES as readonly string[]).includes(language)) {
    throw invalidArgument(`${field}: language "${language}" is not supported; supported are ${SUPPORTED_LANGUAGES.join(", ")}`);
  }
}

const properties: Record<string, PropertyDefinition> = {
  default_language: { levels: EVERYWHERE, builtIn: "en", check: (v) => checkSupported("default_language", v as string) },
  // Empty: every supported language.
  restricted_languages: {
    levels: EVERYWHERE,
    builtIn: [],
    check: (v) => {
      const list = v as string[];
      for (const language of list) checkSupported("restricted_languages", language);
      const twice = list.find((l, i) => list.indexOf(l) !== i);
      if (twice) throw invalidArgument(`restricted_languages: "${twice}" is named twice`);
    },
  },
  supported_languages: { levels: new Set(), builtIn: [...SUPPORTED_LANGUAGES] },
};

/** The languages a context allows, in order: its restricted languages, or every supported one. */
function allowedLanguages(resolved: Resolved): string[] {
  const restricted = resolved.restricted_languages!.value as string[];
  return restricted.length > 0 ? restricted : (resolved.supported_languages!.value as string[]);
}

function outsideRestriction(resolved: Resolved): boolean {
  const restricted = resolved.restricted_languages!.value as string[];
  return restricted.length > 0 && !restricted.includes(resolved.default_language!.value as string);
}

export const LANGUAGE_SETTINGS: SettingsKind = {
  name: "language",
  properties,
  checkResolved(resolved) {
    if (outsideRestriction(resolved)) {
      const restricted = (resolved.restricted_languages!.value as string[]).join(", ");
      throw failedPrecondition(`the default language "${resolved.default_language!.value}" must be one of the restricted languages (${restricted})`);
    }
  },
  // A parent may restrict the languages after a child chose its default: the child then
  // speaks its first allowed language, and says where that comes from.
  adjust(resolved) {
    if (!outsideRestriction(resolved)) return resolved;
    const restriction = resolved.restricted_languages!;
    return { ...resolved, default_language: { value: (restriction.value as string[])[0], from: restriction.from } };
  },
};

/**
 * The first of `wanted` (primary subtags, "de" of "de-CH") that the organization allows (its
 * effective restricted languages, or every supported one), else the organization's
 * default language, which is the instance's unless the organization sets its own.
 */
export async function chooseLanguage(db: Db | Tx, at: { instanceId: string; orgId: string }, wanted: readonly string[]): Promise<SupportedLanguage> {
  const { resolved } = await resolveSettings(db, LANGUAGE_SETTINGS, { type: "org", instanceId: at.instanceId, orgId: at.orgId });
  const allowed = allowedLanguages(resolved);
  const chosen = wanted.map((l) => l.toLowerCase().split("-")[0]!).find((l) => allowed.includes(l));
  return (chosen ?? resolved.default_language!.value) as SupportedLanguage;
}

/** The languages an instance allows (its own restriction or its system's), in order. */
export async function instanceLanguages(db: Db, instanceId: string): Promise<string[]> {
  return allowedLanguages((await resolveSettings(db, LANGUAGE_SETTINGS, { type: "instance", instanceId })).resolved);
}
