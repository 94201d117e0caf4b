import { SIGNATURE_HEADER, signatureHeader } from "../../actions/signature.js";
import type { OutboundClient } from "../../../http/outbound.js";
import type { EmailMessage, SmsMessage } from "../message.js";
import { callProvider } from "./http-call.js";
import type { SendableProvider } from "./provider.js";

/** What an `http` provider receives: the message as rendered, and where it comes from. */
export type HttpProviderBody = { instanceId: string } & (({ channel: "email" } & EmailMessage) | ({ channel: "sms" } & SmsMessage));

/**
 * POSTs the message as JSON to the operator's endpoint, signed as calls to action targets
 * are (the `Platform-Signature` header, src/engines/actions/signature.ts), so the receiver checks it
 * with the same function.
 */
export async function sendSigned(outbound: OutboundClient, provider: SendableProvider, message: HttpProviderBody, timeoutMs: number): Promise<void> {
  const url = (provider.config as { url: string }).url;
  const body = JSON.stringify(message);
  const headers = { "content-type": "application/json", [SIGNATURE_HEADER]: signatureHeader(body, [provider.signingKey ?? ""]) };
  await callProvider(outbound, "the provider's endpoint", url, { headers, body, timeoutMs });
}
