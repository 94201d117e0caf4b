import type { JsonObject } from "@bufbuild/protobuf";

/** The SMTP test server's password for `mailer`. */
export const PASSWORD = "Smtp-Pa55word-9qX";
export const ACCOUNT_SID = `AC${"0123456789abcdef".repeat(2)}`;
export const SERVICE_SID = `MG${"fedcba9876543210".repeat(2)}`;
export const TOKEN = "Twilio-Auth-Token-5kQ";

/** SMTP settings for a test SMTP server at `port` of localhost. */
export const smtpSettings = (port: number, extra: JsonObject = {}): JsonObject => ({
  host: "localhost",
  port,
  tls: "SMTP_TLS_STARTTLS",
  user: "mailer",
  password: PASSWORD,
  senderAddress: "noreply@platform.example",
  senderName: "Platform",
  replyToAddress: "help@platform.example",
  ...extra,
});

export const twilioSettings = (extra: JsonObject = { senderNumber: "+15005550006" }): JsonObject => ({ accountSid: ACCOUNT_SID, token: TOKEN, ...extra });
