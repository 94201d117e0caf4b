import { invalidArgument } from "../errors.js";

/**
 * The messages the domain sends: their kinds, the channel of each, the placeholders its
 * texts may use and must carry. The delivery engine (notifications/) renders and sends them.
 */

export type Channel = "email" | "sms";

/** The kinds of messages, each with its default texts (settings/message-texts/) and the placeholders it carries. */
export const MESSAGE_KINDS = [
  "verify_email",
  "verify_phone",
  "password_reset",
  "password_reset_sms",
  "invite",
  "password_changed",
  "otp_email",
  "otp_sms",
] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/**
 * The values a message's placeholders take (`{{.DisplayName}}` …). `Code` and `URL` only in
 * the kinds that carry them; `ExpiresIn` is already worded for the message's language.
 */
export interface MessageData {
  DisplayName: string;
  OrgName: string;
  ExpiresIn: string;
  Code?: string;
  URL?: string;
}

export type Placeholder = keyof MessageData;

export interface KindRules {
  channel: Channel;
  /** The placeholders its texts may use; the message's data has a value for each. */
  placeholders: readonly Placeholder[];
  /**
   * A custom body must name one of these: a verification message without its code or link
   * would leave its reader stuck.
   */
  carries: readonly Placeholder[];
}

const COMMON = ["DisplayName", "OrgName", "ExpiresIn"] as const satisfies Placeholder[];

export const KINDS: Readonly<Record<MessageKind, KindRules>> = {
  verify_email: { channel: "email", placeholders: [...COMMON, "Code", "URL"], carries: ["Code", "URL"] },
  verify_phone: { channel: "sms", placeholders: [...COMMON, "Code"], carries: ["Code"] },
  password_reset: { channel: "email", placeholders: [...COMMON, "Code", "URL"], carries: ["Code", "URL"] },
  // For people whose phone number is verified and email address is not.
  password_reset_sms: { channel: "sms", placeholders: [...COMMON, "Code"], carries: ["Code"] },
  invite: { channel: "email", placeholders: [...COMMON, "URL"], carries: ["URL"] },
  password_changed: { channel: "email", placeholders: COMMON, carries: [] },
  // Codes for signing in (second factors): no link, a code typed on the page that asked for it.
  otp_email: { channel: "email", placeholders: [...COMMON, "Code"], carries: ["Code"] },
  otp_sms: { channel: "sms", placeholders: [...COMMON, "Code"], carries: ["Code"] },
};

/** A kind named by a request; InvalidArgument listing the kinds otherwise. */
export function messageKind(name: string): MessageKind {
  if (!(MESSAGE_KINDS as readonly string[]).includes(name)) {
    throw invalidArgument(`kind: "${name}" is no kind of message; kinds are ${MESSAGE_KINDS.join(", ")}`);
  }
  return name as MessageKind;
}
