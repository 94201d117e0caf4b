/**
 * The default texts of the messages, one file per language (as translators expect); adding
 * a language means a file here, one for the login pages and its code in SUPPORTED_LANGUAGES.
 */
import type { SupportedLanguage } from "../language.js";
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
import type { MessageTexts } from "./texts.js";

export const DEFAULT_TEXTS: Readonly<Record<SupportedLanguage, MessageTexts>> = { en, de, fr, it, es, pt, nl, pl, ja, zh };
