import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  GetSMSProvider,
  PatchSMSProviderSchema,
  PatchTwilioConfigSchema,
  SMSProviderSchema,
} from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_pb";
import { changed, patchOf, providerOf, rowOf, type ProviderRow } from "./provider-form";

/**
 * An SMS provider as its form holds it, and back: a Twilio account, whose auth token is
 * write-only (never read back; empty keeps the stored one), sending from a number or a
 * messaging service; or an endpoint of the operator's.
 */
export interface SmsValues {
  description: string;
  kind: "twilio" | "http";
  accountSid: string;
  token: string;
  sender: "senderNumber" | "messagingServiceSid";
  senderNumber: string;
  messagingServiceSid: string;
  url: string;
}

export const SMS_KINDS = [
  { value: "twilio", label: "Twilio" },
  { value: "http", label: "An endpoint of yours, which gets each message as a signed JSON POST" },
];
export const SENDERS = [
  { value: "senderNumber", label: "A number of the account" },
  { value: "messagingServiceSid", label: "A messaging service of the account, which picks the number" },
];

export const EMPTY_SMS: SmsValues = {
  description: "",
  kind: "twilio",
  accountSid: "",
  token: "",
  sender: "senderNumber",
  senderNumber: "",
  messagingServiceSid: "",
  url: "",
};

export function smsValues(p: GetSMSProvider): SmsValues {
  const values = { ...EMPTY_SMS, description: p.description };
  if (p.kind.case === "http") return { ...values, kind: "http", url: p.kind.value.url };
  if (p.kind.case !== "twilio") return values;
  const { accountSid, sender } = p.kind.value;
  return { ...values, accountSid, ...(sender.case && { sender: sender.case, [sender.case]: sender.value }) };
}

function twilioConfig(v: SmsValues) {
  return {
    accountSid: v.accountSid.trim(),
    token: v.token,
    sender: { case: v.sender, value: v.sender === "senderNumber" ? v.senderNumber.trim() : v.messagingServiceSid.trim() },
  };
}

export function smsProvider(v: SmsValues): MessageInitShape<typeof SMSProviderSchema> {
  return providerOf(v, () => ({ case: "twilio" as const, value: twilioConfig(v) }));
}

/** Whether these values, saved over those, need the token typed: a new Twilio provider, or another account (the API keeps a token only for its account). */
export function needsToken(saved: SmsValues | undefined, v: SmsValues): boolean {
  return v.kind === "twilio" && v.token === "" && (saved?.kind !== "twilio" || v.accountSid.trim() !== saved.accountSid);
}

/** The patch from the saved values to these: of a Twilio account only what changed, the token when typed; every setting for a provider that becomes one. */
export function smsPatch(saved: SmsValues, v: SmsValues): MessageInitShape<typeof PatchSMSProviderSchema> {
  return patchOf(saved, v, () => {
    if (saved.kind !== "twilio") return { case: "twilio" as const, value: twilioConfig(v) };
    const settings: MessageInitShape<typeof PatchTwilioConfigSchema> = changed(twilioConfig(saved), twilioConfig(v));
    return Object.keys(settings).length > 0 ? { case: "twilio" as const, value: settings } : undefined;
  });
}

export const smsRow = (p: GetSMSProvider): ProviderRow =>
  rowOf(p, () => (p.kind.case === "twilio" ? { kind: "Twilio", where: p.kind.value.sender.value ?? p.kind.value.accountSid } : { kind: "", where: "" }));
