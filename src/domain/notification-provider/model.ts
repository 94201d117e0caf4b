import type { NotificationProviderRow } from "../../store/schema.js";
import { instanceOwnedDetails, type ObjectDetails } from "../details.js";
import { invalidArgument } from "../errors.js";
import type { SecretAim } from "../secret-aim.js";

/** Email (smtp) or SMS providers: one of each family is active per instance. */
export type ProviderFamily = NotificationProviderRow["family"];
export type ProviderKind = NotificationProviderRow["kind"];

/**
 * SMTP and SMS providers: one resource in two families that share every rule (one active per
 * family and instance, secrets sealed and never shown, an `http` kind signed like targets)
 * and differ only in their kinds' settings.
 */
export const AGGREGATES: Record<ProviderFamily, string> = { smtp: "smtp_provider", sms: "sms_provider" };
const NAMES: Record<ProviderFamily, string> = { smtp: "SMTP provider", sms: "SMS provider" };
const KINDS: Record<ProviderFamily, readonly ProviderKind[]> = { smtp: ["smtp", "http"], sms: ["twilio", "http"] };

export const nameOf = (family: ProviderFamily) => NAMES[family];

export type SmtpTls = "none" | "starttls" | "implicit";

export interface SmtpSettings {
  host: string;
  /** 0: the TLS mode's default (smtpPort). */
  port: number;
  tls: SmtpTls;
  /** Empty: no authentication. */
  user: string;
  senderAddress: string;
  senderName: string;
  /** Empty: none. */
  replyToAddress: string;
}

export interface TwilioSettings {
  accountSid: string;
  /** Exactly one of the two. */
  senderNumber?: string;
  messagingServiceSid?: string;
}

export interface HttpSettings {
  url: string;
}

/** A kind and its settings, without secrets: what the `config` column and the events hold. */
export type ProviderConfig = ({ kind: "smtp" } & SmtpSettings) | ({ kind: "twilio" } & TwilioSettings) | ({ kind: "http" } & HttpSettings);

export interface ProviderSpec {
  description: string;
  config: ProviderConfig;
  /** The SMTP password or the Twilio token; empty or absent: none. */
  secret?: string;
}

export interface ProviderPatch {
  description?: string;
  /** Settings of a kind: merged into the current ones of that kind, else a whole new configuration. */
  config?: { kind: ProviderKind; settings: Record<string, unknown> };
  /** A new secret; empty removes it. */
  secret?: string;
  regenerateSigningKey?: boolean;
}

export type ProviderState = "active" | "inactive";

export interface ProviderView {
  details: ObjectDetails;
  state: ProviderState;
  description: string;
  config: ProviderConfig;
  secretSet: boolean;
}

export function smtpPort(settings: Pick<SmtpSettings, "port" | "tls">): number {
  return settings.port || (settings.tls === "implicit" ? 465 : 587);
}

export function configOf(row: Pick<NotificationProviderRow, "kind" | "config">): ProviderConfig {
  return { ...row.config, kind: row.kind } as ProviderConfig;
}

export function providerView(row: NotificationProviderRow): ProviderView {
  return {
    details: instanceOwnedDetails(row),
    state: row.state,
    description: row.description,
    config: configOf(row),
    secretSet: row.secret !== null,
  };
}

/** What a family accepts; the API's oneofs let no other kind through, so this guards the domain. */
export function checkKind(family: ProviderFamily, kind: ProviderKind): void {
  if (!KINDS[family].includes(kind)) throw invalidArgument(`an ${NAMES[family]} cannot be of kind ${kind}`);
}

/**
 * Where each kind's secret goes (secret-aim.ts): an SMTP password to a host and port, over
 * TLS or not, as a user; a Twilio token as an account (Twilio's address is the service's
 * setting, PLATFORM_TWILIO_API_URL); an `http` provider's signing key signs for its URL.
 */
export const SECRET_AIMS: Record<ProviderKind, SecretAim> = {
  smtp: { settings: ["host", "port", "tls", "user"], secret: "password", renewedBy: "password" },
  twilio: { settings: ["accountSid"], secret: "token", renewedBy: "token" },
  http: { settings: ["url"], secret: "signing key", renewedBy: "regenerateSigningKey" },
};

const REQUIRED: Record<ProviderKind, readonly string[]> = {
  smtp: ["host", "senderAddress"],
  twilio: ["accountSid"],
  http: ["url"],
};

/**
 * A configuration made whole: the current settings with a patch's merged in when the kind
 * stays, the patch's alone when it changes (and then every required setting must be in it).
 */
export function mergedConfig(current: ProviderConfig, patch: NonNullable<ProviderPatch["config"]>): ProviderConfig {
  const base = current.kind === patch.kind ? current : defaultsOf(patch.kind);
  const merged: Record<string, unknown> = { ...base, ...patch.settings, kind: patch.kind };
  // A new Twilio sender replaces the other one.
  if (patch.settings.senderNumber !== undefined) delete merged.messagingServiceSid;
  if (patch.settings.messagingServiceSid !== undefined) delete merged.senderNumber;
  const missing = REQUIRED[patch.kind].filter((key) => !merged[key]);
  if (patch.kind === "twilio" && !merged.senderNumber && !merged.messagingServiceSid) missing.push("senderNumber or messagingServiceSid");
  if (missing.length > 0) throw invalidArgument(`a provider that becomes of kind ${patch.kind} needs ${missing.join(", ")}`);
  return merged as unknown as ProviderConfig;
}

function defaultsOf(kind: ProviderKind): Record<string, unknown> {
  return kind === "smtp" ? { port: 0, tls: "starttls", user: "", senderName: "", replyToAddress: "" } : {};
}

/** Settings as stored and put in events: the kind has its own column. */
export function settingsOf(config: ProviderConfig): Record<string, unknown> {
  const { kind: _kind, ...settings } = config;
  return settings;
}
