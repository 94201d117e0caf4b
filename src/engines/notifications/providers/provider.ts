import type { NotificationProviderSettings } from "../../../config/notification-providers.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { configOf, type ProviderConfig } from "../../../domain/notification-provider/model.js";
import type { NotificationProviderRow } from "../../../store/schema.js";

/** A provider as sending needs it: its settings with its secrets opened. */
export interface SendableProvider {
  /** "system" for the default provider from the environment. */
  id: string;
  /** Changes with every change of the provider: pooled connections belong to one version. */
  version: number;
  config: ProviderConfig;
  /** The SMTP password or the Twilio token. */
  secret: string | undefined;
  /** An `http` provider's key. */
  signingKey: string | undefined;
  /** The system default's destination is the operator's own: no outbound address policy. */
  trusted: boolean;
}

export function sendableProvider(row: NotificationProviderRow, box: SecretBox): SendableProvider {
  return {
    id: row.id,
    version: row.sequence,
    config: configOf(row),
    secret: row.secret === null ? undefined : box.decrypt(row.secret),
    signingKey: row.signing_key === null ? undefined : box.decrypt(row.signing_key),
    trusted: false,
  };
}

/** PLATFORM_SMTP_URL and PLATFORM_SMTP_FROM as a provider, if configured. */
export function systemSmtpProvider(settings: NotificationProviderSettings): SendableProvider | undefined {
  const smtp = settings.systemSmtp;
  if (!smtp) return undefined;
  const { password, ...rest } = smtp;
  return {
    id: "system",
    version: 0,
    config: { kind: "smtp", ...rest, replyToAddress: "" },
    secret: password || undefined,
    signingKey: undefined,
    trusted: true,
  };
}
