import type { Channel } from "../../domain/notification/kinds.js";

/**
 * What the delivery engine's modules agree on: a message as rendered for one channel, and
 * how a sender reports what happened. The outbox (outbox/) renders what the domain recorded
 * (domain/notification) with the texts (texts/) and hands it to the instance's active
 * provider (providers/).
 */

export interface EmailMessage {
  to: string;
  subject: string;
  /** The text/plain part. */
  text: string;
  /** The text/html part; placeholders in it were HTML-escaped. */
  html: string;
}

export interface SmsMessage {
  /** E.164. */
  to: string;
  text: string;
}

/** No provider of the channel is active for the instance, and no system default is configured: the message waits. */
export class NoActiveProvider extends Error {
  override name = "NoActiveProvider";
  constructor(readonly channel: Channel) {
    super(`no ${channel === "email" ? "SMTP" : "SMS"} provider is active`);
  }
}

/**
 * A provider refused or failed a message. `retryable`: a later attempt may succeed (a
 * connection failure, a timeout, a 4xx SMTP reply, HTTP 429 or 5xx); otherwise the message
 * fails for good (a 5xx SMTP reply naming the recipient, HTTP 4xx). The message is the
 * provider's own words, for the notification log and `_test`'s answer; never a secret.
 */
export class SendFailed extends Error {
  override name = "SendFailed";
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** Sends through the instance's active provider of the channel, else the system default. */
export interface NotificationSender {
  sendEmail(instanceId: string, message: EmailMessage, signal?: AbortSignal): Promise<void>;
  sendSms(instanceId: string, message: SmsMessage, signal?: AbortSignal): Promise<void>;
}
