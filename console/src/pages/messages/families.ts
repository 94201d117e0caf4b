import type { DescService, MessageInitShape } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { callUnaryMethod } from "@connectrpc/connect-query";
import type { PatchSMSProviderSchema, SMSProviderSchema } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_pb";
import { PlatformSMSProviders } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb";
import type { PatchSMTPProviderSchema, SMTPProviderSchema } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_pb";
import { PlatformSMTPProviders } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb";
import { TEST_EMAIL_RULES, TEST_NUMBER_RULES } from "./rules";

/**
 * The two kinds of provider as their pages tell them apart: PlatformSMTPProviders and
 * PlatformSMSProviders take the same requests under their own names (so one set of pages
 * serves both), and the words and the test's receiver differ. `Create` and `Patch` are the
 * family's provider messages.
 */
export interface ProviderFamily<Create, Patch> {
  service: DescService;
  /** "email provider" or "SMS provider", in the pages' sentences. */
  noun: string;
  list: "/messages/smtp" | "/messages/sms";
  /** What the instance does while none of the family is active. */
  fallback: string;
  /** The test's receiver field: an email address or a phone number. */
  receiver: { label: string; type: "email" | "text"; description: string; rules: { required: string; pattern: { value: RegExp; message: string } } };
  create(transport: Transport, provider: Create): Promise<{ signingKey?: string }>;
  patch(transport: Transport, change: { id: string; provider: Patch }): Promise<{ signingKey?: string }>;
  /** A new signing key for an endpoint: the old one stops signing at once. */
  rekey(transport: Transport, id: string): Promise<{ signingKey?: string }>;
  activate(transport: Transport, id: string): Promise<unknown>;
  deactivate(transport: Transport, id: string): Promise<unknown>;
  remove(transport: Transport, id: string): Promise<unknown>;
  test(transport: Transport, test: { id: string; receiver: string }): Promise<unknown>;
}

/** What every change to a provider of either family needs (reading them: instance.notification.read, which the navigation asks). */
export const WRITE = "instance.notification.write";

const smtp = PlatformSMTPProviders.method;

export const SMTP: ProviderFamily<MessageInitShape<typeof SMTPProviderSchema>, MessageInitShape<typeof PatchSMTPProviderSchema>> = {
  service: PlatformSMTPProviders,
  noun: "email provider",
  list: "/messages/smtp",
  fallback: "The active provider sends the instance's emails; while none is, the system's default provider sends them, if one is configured.",
  receiver: { label: "Email address", type: "email", description: "Where the test email goes.", rules: TEST_EMAIL_RULES },
  create: (t, provider) => callUnaryMethod(t, smtp.createSMTPProvider, { provider }),
  patch: (t, change) => callUnaryMethod(t, smtp.patchSMTPProvider, change),
  rekey: (t, id) => callUnaryMethod(t, smtp.patchSMTPProvider, { id, provider: { regenerateSigningKey: true } }),
  activate: (t, id) => callUnaryMethod(t, smtp.activateSMTPProvider, { id }),
  deactivate: (t, id) => callUnaryMethod(t, smtp.deactivateSMTPProvider, { id }),
  remove: (t, id) => callUnaryMethod(t, smtp.deleteSMTPProvider, { id }),
  test: (t, { id, receiver }) => callUnaryMethod(t, smtp.testSMTPProvider, { id, test: { receiver } }),
};

const sms = PlatformSMSProviders.method;

export const SMS: ProviderFamily<MessageInitShape<typeof SMSProviderSchema>, MessageInitShape<typeof PatchSMSProviderSchema>> = {
  service: PlatformSMSProviders,
  noun: "SMS provider",
  list: "/messages/sms",
  fallback: "The active provider sends the instance's text messages; while none is, they wait.",
  receiver: {
    label: "Phone number",
    type: "text",
    description: "Where the test message goes, in E.164 format: + and the country code, such as +41791234567.",
    rules: TEST_NUMBER_RULES,
  },
  create: (t, provider) => callUnaryMethod(t, sms.createSMSProvider, { provider }),
  patch: (t, change) => callUnaryMethod(t, sms.patchSMSProvider, change),
  rekey: (t, id) => callUnaryMethod(t, sms.patchSMSProvider, { id, provider: { regenerateSigningKey: true } }),
  activate: (t, id) => callUnaryMethod(t, sms.activateSMSProvider, { id }),
  deactivate: (t, id) => callUnaryMethod(t, sms.deactivateSMSProvider, { id }),
  remove: (t, id) => callUnaryMethod(t, sms.deleteSMSProvider, { id }),
  test: (t, { id, receiver }) => callUnaryMethod(t, sms.testSMSProvider, { id, test: { receiver } }),
};
