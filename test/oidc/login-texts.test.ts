import { describe, expect, it } from "vitest";
import { SUPPORTED_LANGUAGES } from "../../src/domain/settings/language.js";
import { TEXTS } from "../../src/oidc/login/texts/index.js";

describe("login page texts", () => {
  it("exist for exactly the supported languages", () => {
    expect(Object.keys(TEXTS).sort()).toEqual([...SUPPORTED_LANGUAGES].sort());
  });

  it("have every key of English, none empty, in every language", () => {
    const keys = Object.keys(TEXTS.en).sort();
    for (const language of SUPPORTED_LANGUAGES) {
      const texts = TEXTS[language] as unknown as Record<string, string>;
      expect(Object.keys(texts).sort(), language).toEqual(keys);
      for (const key of keys) expect(texts[key]!.trim(), `${language}.${key}`).not.toBe("");
    }
  });

  it("are translated: no language but English repeats most English texts", () => {
    for (const language of SUPPORTED_LANGUAGES.filter((l) => l !== "en")) {
      const texts = TEXTS[language] as unknown as Record<string, string>;
      const same = Object.entries(TEXTS.en).filter(([key, text]) => texts[key] === text).map(([key]) => key);
      // Short words may coincide ("Password" in Italian); sentences may not.
      expect(same.length, `${language}: ${same.join(", ")}`).toBeLessThanOrEqual(2);
    }
  });
});
