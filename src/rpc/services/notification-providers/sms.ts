import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { GetSMSProviderSchema, PatchSMSProvider, SMSProvider } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_pb.js";
import { PlatformSMSProviders } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import type { ProviderPatch, ProviderSpec, ProviderView } from "../../../domain/notification-provider/model.js";
import { given, httpRead, readCommon } from "./convert.js";
import { providersService, type FamilyCodec, type NotificationProvidersDeps } from "./handlers.js";

type Sender = { case: "senderNumber" | "messagingServiceSid"; value: string } | { case: undefined; value?: undefined };

const senderOf = (sender: Sender) => (sender.case ? { [sender.case]: sender.value } : {});

/** Validation has made sure a kind and a sender are set. */
function spec(p: SMSProvider): ProviderSpec {
  if (p.kind.case === "http") return { description: p.description, config: { kind: "http", url: p.kind.value.url } };
  const { accountSid, token, sender } = p.kind.value!;
  return { description: p.description, config: { kind: "twilio", accountSid, ...senderOf(sender) }, secret: token };
}

function patch(p: PatchSMSProvider): ProviderPatch {
  const common = { ...(p.description !== undefined && { description: p.description }), regenerateSigningKey: p.regenerateSigningKey };
  if (p.kind.case === "http") return { ...common, config: { kind: "http", settings: { url: p.kind.value.url } } };
  if (p.kind.case !== "twilio") return common;
  const { accountSid, token, sender } = p.kind.value;
  return { ...common, config: { kind: "twilio", settings: given({ accountSid, ...senderOf(sender) }) }, ...(token !== undefined && { secret: token }) };
}

function read(view: ProviderView): MessageInitShape<typeof GetSMSProviderSchema> {
  const config = view.config;
  if (config.kind === "http") return { ...readCommon(view), kind: httpRead(config) };
  if (config.kind !== "twilio") throw new Error(`an SMS provider of kind ${config.kind}`);
  const sender: Sender = config.senderNumber
    ? { case: "senderNumber", value: config.senderNumber }
    : { case: "messagingServiceSid", value: config.messagingServiceSid ?? "" };
  return { ...readCommon(view), kind: { case: "twilio", value: { accountSid: config.accountSid, tokenSet: view.secretSet, sender } } };
}

const codec: FamilyCodec<SMSProvider, PatchSMSProvider, MessageInitShape<typeof GetSMSProviderSchema>> = {
  family: "sms",
  spec,
  patch,
  read,
};

export const smsProvidersService = (deps: NotificationProvidersDeps): ServiceImpl<typeof PlatformSMSProviders> =>
  providersService(PlatformSMSProviders, codec, deps);
