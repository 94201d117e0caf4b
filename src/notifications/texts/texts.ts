import type { MessageKind } from "../message.js";

/** The texts of an email: a subject line and a body template. */
export interface EmailTexts {
  subject: string;
  body: string;
}

/** An SMS has no subject. */
export interface SmsTexts {
  body: string;
}

/** The default texts of one language; each language file has every kind (the type checks it). */
export type MessageTexts = Record<Exclude<MessageKind, "verify_phone">, EmailTexts> & { verify_phone: SmsTexts };
