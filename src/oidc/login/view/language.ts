import { chooseLanguage } from "../../../domain/settings/language.js";
import type { Db } from "../../../store/db.js";
import type { Language } from "./texts/index.js";

/** Primary language subtags in order of preference (RFC 4647 ranges with q-values). */
function acceptLanguages(header: string | undefined): string[] {
  return (header ?? "")
    .split(",")
    .map((part, index) => {
      const [range, ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? 1,
      );
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
export function loginLanguage(
  db: Db,
  at: { instanceId: string; orgId: string },
  uiLocales: string | undefined,
  acceptLanguage: string | undefined,
): Promise<Language> {
  return chooseLanguage(db, at, [...(uiLocales ?? "").split(" "), ...acceptLanguages(acceptLanguage)]);
}
