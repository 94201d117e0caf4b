import { describe, expect, it } from "vitest";
import { SUPPORTED_LANGUAGES } from "../../src/domain/settings/language.js";
import { DEFAULT_TEXTS } from "../../src/domain/settings/message-texts/defaults.js";
import { TEXTS, type Language } from "../../src/oidc/login/view/texts/index.js";

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
      const same = Object.entries(TEXTS.en)
        .filter(([key, text]) => texts[key] === text)
        .map(([key]) => key);
      // Short words may coincide ("Password" in Italian); sentences may not.
      expect(same.length, `${language}: ${same.join(", ")}`).toBeLessThanOrEqual(2);
    }
  });
});

/**
 * One register per language, in every login page text and every default message text
 * (issue 35 §3): the one peers use on their login pages. German, Dutch, French, Spanish,
 * Italian and Portuguese address the person formally (Sie, u, vous, usted, Lei, você),
 * Polish with the imperative and the courteous capitalised Ty forms, never Pan/Pani,
 * Japanese politely (です/ます), Chinese with 您. Each list names forms of the other register.
 */
describe("the register of the texts", () => {
  // Word boundaries that know letters beyond ASCII (\b does not: "für", "già", "łeś").
  const words = (list: string, flags = "") => new RegExp(`(?<![\\p{L}\\p{N}])(?:${list})(?![\\p{L}\\p{N}])`, `u${flags}`);
  const INFORMAL: Record<Language, RegExp[]> = {
    en: [],
    de: [
      words("du|dich|dir|dein\\p{L}*|euch|euer|eure\\p{L}*", "i"),
      words("bist|hast|kannst|möchtest|musst|willst|wirst", "i"),
      // Imperatives of du ("Versuche" alone is also the plural noun, "Wende" a noun).
      words("Gib|Melde|Wähle|Warte|Beginne|Fülle|Bitte einen|[Vv]ersuche es"),
    ],
    fr: [words("tu|te|toi|ton|ta|tes|tien|tienne", "i"), /(?<!\p{L})t['’](?=\p{L})/iu, words("saisis|choisis|réessaie|veux|peux", "i")],
    es: [
      words("tú|tu|tus|te|ti|contigo|vosotros|vuestr\\p{L}*", "i"),
      words("eres|estás|tienes|puedes|quieres|has|introduce|inténtalo|introdúcelo|ignóralo|cámbiala", "i"),
    ],
    it: [
      words("tu|tuo|tua|tuoi|tue|ti|te|puoi|vuoi|devi|hai|sei (?:tu|stato|stata|uscito|uscita)", "i"),
      words(
        "Inserisci|Inseriscilo|Riprova|Attendi|Chiedi|Rivolgiti|Contatta|Compila|Ricomincia|Scansiona|Scegli|Scegline|Ignoralo|cambiala|Registrati|unirti",
        "i",
      ),
    ],
    pt: [words("tu|te|ti|teu|tua|teus|tuas|contigo|vós|vosso|vossa", "i")],
    nl: [words("je|jij|jou|jouw|jezelf|jullie", "i")],
    // The courtesy forms of Ty are capitalised; Pan/Pani would be the other register, and
    // a gendered past (Otrzymałeś) addresses half of the people.
    pl: [
      words("Pan|Pani|Pana|Panu|Panią|Państwo|Państwa"),
      words("twój|twoja|twoje|twojego|twojej|twoim|twoją|twoich|ciebie|cię|tobie|ty"),
      words("\\p{L}+(?:łeś|łaś)"),
    ],
    ja: [/あなた|君|お前|きみ/],
    zh: [/你/],
  };
  // Placeholders are no words of the language.
  const plain = (text: string) => text.replace(/\{\{[^}]*\}\}|\{\w+\}/g, " ");

  function textsOf(language: Language): [string, string][] {
    const login = Object.entries(TEXTS[language] as unknown as Record<string, string>).map(([key, text]): [string, string] => [`login ${key}`, text]);
    const messages = Object.entries(DEFAULT_TEXTS[language]).flatMap(([kind, t]): [string, string][] => [
      ...("subject" in t ? [[`${kind} subject`, t.subject] as [string, string]] : []),
      [`${kind} body`, t.body],
    ]);
    return [...login, ...messages];
  }

  it.each(SUPPORTED_LANGUAGES.filter((l) => l !== "en"))("%s: no form of the other register", (language) => {
    const found = textsOf(language).flatMap(([where, text]) =>
      INFORMAL[language].flatMap((re) => [...plain(text).matchAll(new RegExp(re.source, `${re.flags}g`))].map((m) => `${where}: "${m[0]}"`)),
    );
    expect(found).toEqual([]);
  });

  it("ja: every sentence ends politely (です/ます/ください)", () => {
    const plainEnds = textsOf("ja").flatMap(([where, text]) =>
      plain(text)
        .split(/(?<=[。？])/)
        .map((s) => s.trim())
        .filter((s) => /[。？]$/.test(s))
        .map((s) => s.replace(/[。？]$/, "").replace(/（[^）]*）$/, ""))
        .filter((s) => !/(ます|ません|ました|ましょう|です|でした|ください|ますか|ですか|ませんか)$/.test(s))
        .map((s) => `${where}: ${s}`),
    );
    expect(plainEnds).toEqual([]);
  });
});
