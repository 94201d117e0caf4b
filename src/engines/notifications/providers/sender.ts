import { readFileSync } from "node:fs";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { TtlCache } from "../../../cache/ttl-cache.js";
import type { NotificationProviderSettings } from "../../../config/notification-providers.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import type { OutboundClient } from "../../../http/outbound.js";
import type { Db } from "../../../store/db.js";
import type { ProviderFamily } from "../../../domain/notification-provider/model.js";
import type { NotificationProviderRow } from "../../../store/schema.js";
import { NoActiveProvider, type EmailMessage, type NotificationSender, type SmsMessage } from "../message.js";
import { ActiveProviders } from "./active.js";
import { withinDeadline } from "./deadline.js";
import { sendSigned } from "./http-kind.js";
import { sendableProvider, systemSmtpProvider, type SendableProvider } from "./provider.js";
import { SmtpPool } from "./smtp-pool.js";
import { sendMail, sendOnce, type SmtpOptions } from "./smtp-transport.js";
import { sendTwilio } from "./twilio.js";

export interface ProviderSenderDeps {
  db: Db;
  box: SecretBox;
  access: AccessEpoch;
  /** The one client for calls to other servers: Twilio and `http` providers. */
  outbound: OutboundClient;
  settings: NotificationProviderSettings;
  /** PLATFORM_OUTBOUND_ALLOW_PRIVATE: SMTP hosts configured through the API may be internal. */
  allowPrivate: boolean;
  /** PLATFORM_OUTBOUND_TIMEOUT: bounds each call to Twilio or an `http` provider. */
  outboundTimeoutMs: number;
}

/**
 * Sends through the instance's active provider of the channel, else (email only) the
 * system default of PLATFORM_SMTP_URL, else throws NoActiveProvider. Failures are SendFailed
 * in the provider's words (failures.ts says which may pass later).
 */
export class ProviderSender implements NotificationSender {
  readonly #active: ActiveProviders;
  readonly #pool: SmtpPool;
  readonly #smtp: SmtpOptions;
  readonly #system: SendableProvider | undefined;
  /** The provider each instance's family last sent through: when it changes, the old one's connections close. */
  readonly #last: TtlCache<string, string>;

  constructor(private readonly deps: ProviderSenderDeps) {
    const { settings } = deps;
    this.#active = new ActiveProviders(deps.db, deps.box, deps.access);
    this.#smtp = { timeoutMs: settings.smtpTimeoutMs, extraCa: settings.smtpCaPath && readCa(settings.smtpCaPath), allowPrivate: deps.allowPrivate };
    this.#pool = new SmtpPool({ ...this.#smtp, maxTransports: settings.smtpPoolSize, maxConnections: settings.smtpMaxConnections });
    this.#system = systemSmtpProvider(settings);
    this.#last = new TtlCache(24 * 3_600_000, settings.smtpPoolSize);
  }

  async sendEmail(instanceId: string, message: EmailMessage, signal?: AbortSignal): Promise<void> {
    const provider = (await this.#current(instanceId, "smtp")) ?? this.#system;
    if (!provider) throw new NoActiveProvider("email");
    await this.#email(provider, instanceId, message, signal, true);
  }

  async sendSms(instanceId: string, message: SmsMessage, signal?: AbortSignal): Promise<void> {
    const provider = await this.#current(instanceId, "sms");
    if (!provider) throw new NoActiveProvider("sms");
    await this.#sms(provider, instanceId, message, signal);
  }

  /**
   * `_test`: one message through this provider, active or not, as it is stored now (over an
   * SMTP connection of its own). Throws SendFailed as the sends do.
   */
  async test(instanceId: string, row: NotificationProviderRow, receiver: string): Promise<void> {
    const provider = sendableProvider(row, this.deps.box);
    if (row.family === "smtp") await this.#email(provider, instanceId, testEmail(receiver), undefined, false);
    else await this.#sms(provider, instanceId, { to: receiver, text: "Test message: the SMS provider delivers." }, undefined);
  }

  /** Closes the pooled connections of a provider that changed or is gone. */
  forget(providerId: string): void {
    this.#pool.close(providerId);
  }

  close(): void {
    this.#pool.closeAll();
  }

  async #current(instanceId: string, family: ProviderFamily): Promise<SendableProvider | undefined> {
    const provider = await this.#active.of(instanceId, family);
    const key = `${instanceId} ${family}`;
    const last = this.#last.get(key);
    if (last !== undefined && last !== provider?.id) this.#pool.close(last);
    if (provider) this.#last.set(key, provider.id);
    else this.#last.delete(key);
    return provider;
  }

  #email(provider: SendableProvider, instanceId: string, message: EmailMessage, signal: AbortSignal | undefined, pooled: boolean): Promise<void> {
    if (provider.config.kind === "http") {
      return withinDeadline(
        () => sendSigned(this.deps.outbound, provider, { instanceId, channel: "email", ...message }, this.deps.outboundTimeoutMs),
        this.deps.outboundTimeoutMs,
        signal,
        "sending the email",
      );
    }
    const work = pooled
      ? (stop: AbortSignal) => this.#pool.transport(provider).then((transport) => sendMail(transport, provider, message, stop))
      : (stop: AbortSignal) => sendOnce(provider, message, this.#smtp, stop);
    return withinDeadline(work, this.#smtp.timeoutMs, signal, "sending the email");
  }

  #sms(provider: SendableProvider, instanceId: string, message: SmsMessage, signal: AbortSignal | undefined): Promise<void> {
    const { outbound, outboundTimeoutMs: timeoutMs, settings } = this.deps;
    const work = () =>
      provider.config.kind === "twilio"
        ? sendTwilio(outbound, settings.twilioApiUrl, provider.config, provider.secret ?? "", message, timeoutMs)
        : sendSigned(outbound, provider, { instanceId, channel: "sms", ...message }, timeoutMs);
    return withinDeadline(work, timeoutMs, signal, "sending the text message");
  }
}

function readCa(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`PLATFORM_SMTP_CA_PATH: cannot read ${path} (${(error as Error).message})`, { cause: error });
  }
}

function testEmail(to: string): EmailMessage {
  const words = "This test email shows that the SMTP provider delivers.";
  return { to, subject: "Test email", text: `${words}\n`, html: `<!doctype html><html><body><p>${words}</p></body></html>` };
}
