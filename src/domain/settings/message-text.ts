import { checkSupported, SUPPORTED_LANGUAGES, type SupportedLanguage } from "./language.js";
import type { PropertyDefinition, SettingsKind } from "./kind.js";
import { MESSAGE_KINDS, type MessageKind } from "../notification/kinds.js";
import { DEFAULT_TEXTS } from "./message-texts/defaults.js";
import { messageKind } from "../notification/kinds.js";
import { checkTemplate } from "../notification/template.js";

/*
 * The texts of one kind and language are a kind of settings of their own
 * (`message_text.<kind>.<language>`): one row per context that overrides them, resolved
 * like any settings, so a message reads only the texts it needs.
 */

const EVERYWHERE = new Set(["system", "instance", "org"] as const);

function textSettings(kind: MessageKind, language: SupportedLanguage): SettingsKind {
  const defaults: { subject?: string; body: string } = DEFAULT_TEXTS[language][kind];
  const property = (part: "subject" | "body", builtIn: string): PropertyDefinition => ({
    levels: EVERYWHERE,
    builtIn,
    check: (value) => checkTemplate(kind, part, value as string),
  });
  return {
    name: `message_text.${kind}.${language}`,
    // SMS kinds have no subject property: resolving shows none, setting one is refused.
    properties: { ...(defaults.subject !== undefined && { subject: property("subject", defaults.subject) }), body: property("body", defaults.body) },
  };
}

const ALL = new Map(MESSAGE_KINDS.flatMap((kind) => SUPPORTED_LANGUAGES.map((language) => [`${kind}.${language}`, textSettings(kind, language)] as const)));

export function messageTextSettings(kind: MessageKind, language: SupportedLanguage): SettingsKind {
  return ALL.get(`${kind}.${language}`)!;
}

/** The settings of a kind and language a request names; InvalidArgument for others. */
export function requestedMessageText(kind: string, language: string): { kind: MessageKind; settings: SettingsKind } {
  const known = messageKind(kind);
  checkSupported("language", language);
  return { kind: known, settings: messageTextSettings(known, language) };
}

/** The event types their changes append (`settings.<kind>.set`), for event executions. */
export const MESSAGE_TEXT_EVENT_TYPES: readonly string[] = [...ALL.values()].map((s) => `settings.${s.name}.set`);
