import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  SMTPTls,
  type GetSMTPProviderSchema,
  type PatchSMTPProvider,
  type SMTPProvider,
} from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_pb.js";
import { PlatformSMTPProviders } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { smtpPort, type ProviderPatch, type ProviderSpec, type ProviderView, type SmtpTls } from "../../../domain/notification-provider/model.js";
import { given, httpRead, readCommon } from "./convert.js";
import { providersService, type FamilyCodec, type NotificationProvidersDeps } from "./handlers.js";

const TLS_FROM: Record<SMTPTls, SmtpTls> = {
  [SMTPTls.SMTP_TLS_UNSPECIFIED]: "starttls",
  [SMTPTls.SMTP_TLS_NONE]: "none",
  [SMTPTls.SMTP_TLS_STARTTLS]: "starttls",
  [SMTPTls.SMTP_TLS_IMPLICIT]: "implicit",
};
const TLS_TO: Record<SmtpTls, SMTPTls> = { none: SMTPTls.SMTP_TLS_NONE, starttls: SMTPTls.SMTP_TLS_STARTTLS, implicit: SMTPTls.SMTP_TLS_IMPLICIT };

/** Validation has made sure a kind is set. */
function spec(p: SMTPProvider): ProviderSpec {
  if (p.kind.case === "http") return { description: p.description, config: { kind: "http", url: p.kind.value.url } };
  const { host, port, tls, user, password, senderAddress, senderName, replyToAddress } = p.kind.value!;
  return {
    description: p.description,
    config: { kind: "smtp", host, port, tls: TLS_FROM[tls], user, senderAddress, senderName, replyToAddress },
    secret: password,
  };
}

function patch(p: PatchSMTPProvider): ProviderPatch {
  const common = { ...(p.description !== undefined && { description: p.description }), regenerateSigningKey: p.regenerateSigningKey };
  if (p.kind.case === "http") return { ...common, config: { kind: "http", settings: { url: p.kind.value.url } } };
  if (p.kind.case !== "smtp") return common;
  const { host, port, tls, user, password, senderAddress, senderName, replyToAddress } = p.kind.value;
  const settings = given({ host, port, tls: tls && TLS_FROM[tls], user, senderAddress, senderName, replyToAddress });
  return { ...common, config: { kind: "smtp", settings }, ...(password !== undefined && { secret: password }) };
}

function read(view: ProviderView): MessageInitShape<typeof GetSMTPProviderSchema> {
  const config = view.config;
  if (config.kind === "http") return { ...readCommon(view), kind: httpRead(config) };
  if (config.kind !== "smtp") throw new Error(`an SMTP provider of kind ${config.kind}`);
  const { kind: _, port: __, tls, ...settings } = config;
  return { ...readCommon(view), kind: { case: "smtp", value: { ...settings, port: smtpPort(config), tls: TLS_TO[tls], passwordSet: view.secretSet } } };
}

const codec: FamilyCodec<SMTPProvider, PatchSMTPProvider, MessageInitShape<typeof GetSMTPProviderSchema>> = {
  family: "smtp",
  spec,
  patch,
  read,
};

export const smtpProvidersService = (deps: NotificationProvidersDeps): ServiceImpl<typeof PlatformSMTPProviders> =>
  providersService(PlatformSMTPProviders, codec, deps);
