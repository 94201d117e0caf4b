import type { SupportedLanguage } from "../../../domain/settings/language.js";
import type { MessageData, MessageKind } from "../../../domain/notification/kinds.js";
import { emailHtml } from "./html.js";
import { KINDS } from "../../../domain/notification/kinds.js";
import { fill } from "../../../domain/notification/template.js";

/** A subject (email kinds) and a body template, as resolved for a context or the defaults. */
export interface MessageTemplate {
  subject?: string;
  body: string;
}

/** An email's parts: with `to`, an EmailMessage. */
export interface RenderedEmail {
  channel: "email";
  subject: string;
  /** The text/plain part. */
  text: string;
  /** The text/html part, placeholders HTML-escaped. */
  html: string;
}

/** An SMS's text: with `to`, an SmsMessage. */
export interface RenderedSms {
  channel: "sms";
  sms: string;
}

export type RenderedMessage = RenderedEmail | RenderedSms;

const asIs = (text: string) => text;

/**
 * A message of a kind from its template: the SMS text for SMS kinds; for email kinds the
 * subject (one line), and the text and HTML parts from the one body template.
 * Placeholders of the kind are replaced (HTML-escaped in the HTML part); anything else in
 * braces stays as written. `data` must have a value for each placeholder of the kind (a
 * missing one is a bug of the caller, thrown as an Error).
 */
export function renderMessage(kind: MessageKind, language: SupportedLanguage, template: MessageTemplate, data: MessageData): RenderedMessage {
  const rules = KINDS[kind];
  const values = new Map<string, string>();
  for (const name of rules.placeholders) {
    const value = data[name];
    if (value === undefined) throw new Error(`a ${kind} message needs a value for ${name}`);
    values.set(name, value);
  }
  const body = template.body.replace(/\r\n?/g, "\n");
  const text = fill(body, values, asIs, (_, v) => v).trim();
  if (rules.channel === "sms") return { channel: "sms", sms: text };
  // One line, whatever a value holds: a header cannot be split by a display name.
  const subject = fill(template.subject ?? "", values, asIs, (_, v) => v)
    .replace(/\s+/g, " ")
    .trim();
  return { channel: "email", subject, text: `${text}\n`, html: emailHtml(language, subject, body, values) };
}
