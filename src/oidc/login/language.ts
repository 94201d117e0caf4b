import { allowedLanguages, LANGUAGE_SETTINGS } from "../../domain/settings/language.js";
import { resolveSettings } from "../../domain/settings/store.js";
import type { Db } from "../../store/eventstore.js";
import type { Language } from "./texts/index.js";

/** Primary language subtags in order of preference (RFC 4647 ranges with q-values). */
function acceptLanguages(header: string | undefined): string[] {
  return (header ?? "")
    .split(",")
    .map((part, index) => {
      const [range, ...params] = part.trim().split(";");
      const q = Number(params.find((p) => p.trim().startsWith("q="))?.trim().slice(2) ?? 1);
      return { tag: (range ?? "").trim().toLowerCase().split("-")[0]!, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((l) => l.tag && l.tag !== "*" && l.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((l) => l.tag);
}

/**
 * The login pages' language: the first of `ui_locales` that the organization allows (its
 * effective restricted languages, or every supported one), else the browser's
 * Accept-Language, else the organization's default language.
 */
export async function loginLanguage(db: Db, at: { instanceId: string; orgId: string }, uiLocales: string | undefined, acceptLanguage: string | undefined): Promise<Language> {
  const { resolved } = await resolveSettings(db, LANGUAGE_SETTINGS, { type: "org", instanceId: at.instanceId, orgId: at.orgId });
  const allowed = allowedLanguages(resolved);
  const fromLocales = (uiLocales ?? "").split(" ").map((l) => l.toLowerCase().split("-")[0]!);
  const chosen = [...fromLocales, ...acceptLanguages(acceptLanguage)].find((l) => allowed.includes(l));
  return (chosen ?? resolved.default_language!.value) as Language;
}
