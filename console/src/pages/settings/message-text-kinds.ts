/**
 * The kinds of message whose texts can be changed, as SetMessageTextRequest lists them; the
 * API has no call that lists them. SMS kinds have no subject (their resolved texts have none).
 */
export const MESSAGE_KINDS = [
  { key: "verify_email", label: "Email verification" },
  { key: "verify_phone", label: "Phone verification (SMS)" },
  { key: "password_reset", label: "Password reset" },
  { key: "password_reset_sms", label: "Password reset (SMS)" },
  { key: "invite", label: "Invitation" },
  { key: "password_changed", label: "Password changed" },
  { key: "otp_email", label: "Sign-in code (email)" },
  { key: "otp_sms", label: "Sign-in code (SMS)" },
] as const;

export type MessageKind = (typeof MESSAGE_KINDS)[number]["key"];

/** The most an SMS body may have (the API refuses more). */
export const SMS_BODY_MAX = 1600;
export const BODY_MAX = 10_000;

export const isSms = (kind: MessageKind) => kind.endsWith("_sms") || kind === "verify_phone";
