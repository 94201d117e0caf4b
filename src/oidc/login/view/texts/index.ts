/**
 * The login pages' texts, one file per language (as translators expect); adding a language
 * means a file here and its code in SUPPORTED_LANGUAGES.
 */
import { en } from "./en.js";
import { de } from "./de.js";
import { fr } from "./fr.js";
import { it } from "./it.js";
import { es } from "./es.js";
import { pt } from "./pt.js";
import { nl } from "./nl.js";
import { pl } from "./pl.js";
import { ja } from "./ja.js";
import { zh } from "./zh.js";
import type { Language, Texts } from "./texts.js";

export type { Language, Texts } from "./texts.js";

export const TEXTS: Record<Language, Texts> = { en, de, fr, it, es, pt, nl, pl, ja, zh };
