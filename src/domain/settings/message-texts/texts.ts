import type { MessageKind } from "../../notification/kinds.js";

/** The texts of an email: a subject line and a body template. */
interface EmailTexts {
  subject: string;
  body: string;
}

/** An SMS has no subject. */
interface SmsTexts {
  body: string;
}

/** The default texts of one language; each language file has every kind (the type checks it). */
export type MessageTexts = Record<Exclude<MessageKind, SmsKind>, EmailTexts> & Record<SmsKind, SmsTexts>;

/** The kinds sent by SMS (notification/kinds.ts says so too; the type keeps their texts without a subject). */
type SmsKind = "verify_phone" | "password_reset_sms" | "otp_sms";
