import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import nodemailer, { type SMTPTransportOptions, type Transporter } from "nodemailer";
import { smtpPort, type SmtpSettings } from "../../../domain/notification-provider/model.js";
import type { EmailMessage } from "../message.js";
import { smtpDestination } from "./destination.js";
import { smtpFailure } from "./failures.js";
import type { SendableProvider } from "./provider.js";

export interface SmtpOptions {
  /** Bounds connecting, each reply of the server, and each silence on the socket. */
  timeoutMs: number;
  /** A PEM CA trusted beside the system's roots (PLATFORM_SMTP_CA_PATH). */
  extraCa: string | undefined;
  /** PLATFORM_OUTBOUND_ALLOW_PRIVATE: hosts configured through the API may be internal. */
  allowPrivate: boolean;
}

const smtpSettings = (provider: SendableProvider) => provider.config as { kind: "smtp" } & SmtpSettings;

/**
 * nodemailer's options for a provider: certificates always verified (against the system's
 * roots and the extra CA), STARTTLS required unless the provider says no TLS, no file or
 * URL access from message content, every step bounded.
 */
export async function transportOptions(provider: SendableProvider, options: SmtpOptions): Promise<SMTPTransportOptions> {
  const settings = smtpSettings(provider);
  const destination = await smtpDestination(settings.host, !provider.trusted && !options.allowPrivate);
  const servername = destination.servername ?? settings.host;
  return {
    host: destination.host,
    port: smtpPort(settings),
    secure: settings.tls === "implicit",
    requireTLS: settings.tls === "starttls",
    ignoreTLS: settings.tls === "none",
    ...(settings.user && { auth: { user: settings.user, pass: provider.secret ?? "" } }),
    tls: {
      rejectUnauthorized: true,
      minVersion: "TLSv1.2",
      // SNI takes no address literal; the certificate is then checked against the address.
      ...(isIP(servername) === 0 && { servername }),
      ...(options.extraCa && { ca: [...rootCertificates, options.extraCa] }),
    },
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    dnsTimeout: options.timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/**
 * A multipart email (text and HTML) from the provider's sender, through a transport. When
 * `signal` aborts, nodemailer drops the message from its pool's queue or closes the
 * connection sending it: nothing goes out after the sender gave up on it.
 */
export async function sendMail(transport: Transporter, provider: SendableProvider, message: EmailMessage, signal: AbortSignal): Promise<void> {
  const settings = smtpSettings(provider);
  try {
    await transport.sendMail({
      signal,
      from: { name: settings.senderName, address: settings.senderAddress },
      ...(settings.replyToAddress && { replyTo: settings.replyToAddress }),
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  } catch (error) {
    throw smtpFailure(error);
  }
}

/** One email over a connection of its own, closed afterwards: for `_test`, which must see the provider as it is now. */
export async function sendOnce(provider: SendableProvider, message: EmailMessage, options: SmtpOptions, signal: AbortSignal): Promise<void> {
  const transport = nodemailer.createTransport(await transportOptions(provider, options));
  try {
    await sendMail(transport, provider, message, signal);
  } finally {
    transport.close();
  }
}
