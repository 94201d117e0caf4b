import type { TwilioSettings } from "../../../domain/notification-provider/model.js";
import type { OutboundClient } from "../../../http/outbound.js";
import type { SmsMessage } from "../message.js";
import { callProvider } from "./http-call.js";

/**
 * Twilio's Messages API: `POST <base>/2010-04-01/Accounts/{sid}/Messages.json`, form-encoded,
 * with the account SID and token as Basic credentials. The base is PLATFORM_TWILIO_API_URL.
 */
export async function sendTwilio(
  outbound: OutboundClient,
  baseUrl: string,
  settings: TwilioSettings,
  token: string,
  sms: SmsMessage,
  timeoutMs: number,
): Promise<void> {
  const form = new URLSearchParams({ To: sms.to, Body: sms.text });
  if (settings.senderNumber) form.set("From", settings.senderNumber);
  else form.set("MessagingServiceSid", settings.messagingServiceSid ?? "");
  const url = `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid)}/Messages.json`;
  const headers = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
    authorization: `Basic ${Buffer.from(`${settings.accountSid}:${token}`).toString("base64")}`,
  };
  await callProvider(outbound, "Twilio", url, { headers, body: form.toString(), timeoutMs }, twilioWords);
}

/** Twilio's errors are JSON with a message and a code (https://www.twilio.com/docs/api/errors). */
function twilioWords(body: Buffer): string {
  try {
    const error = JSON.parse(body.toString("utf8")) as { message?: unknown; code?: unknown };
    if (typeof error.message === "string") return `${error.message}${typeof error.code === "number" ? ` (error ${error.code})` : ""}`;
  } catch {
    // Not JSON (a proxy's page): its text is all there is to say.
  }
  return body.toString("utf8");
}
