import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  SMTPTls,
  type GetSMTPProvider,
  type PatchSMTPConfigSchema,
  type PatchSMTPProviderSchema,
  type SMTPProviderSchema,
} from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_pb";
import { changed, patchOf, providerOf, rowOf, type ProviderRow } from "./provider-form";

/**
 * An email provider as its form holds it, and back: an SMTP server, whose password is
 * write-only (never read back; empty keeps the stored one), or an endpoint of the operator's.
 */
export interface SmtpValues {
  description: string;
  kind: "smtp" | "http";
  host: string;
  /** Empty: the TLS mode's usual port. */
  port: string;
  tls: Tls;
  user: string;
  password: string;
  senderAddress: string;
  senderName: string;
  replyToAddress: string;
  url: string;
}

type Tls = "starttls" | "implicit" | "none";

export const SMTP_KINDS = [
  { value: "smtp", label: "An SMTP server" },
  { value: "http", label: "An endpoint of yours, which gets each email as a signed JSON POST" },
];
export const TLS_MODES = [
  { value: "starttls", label: "STARTTLS: a plain connection upgraded to TLS (port 587 by default)" },
  { value: "implicit", label: "TLS from the first byte (port 465 by default)" },
  { value: "none", label: "None: the password and the emails cross the network in the clear" },
];
const TLS: Record<Tls, SMTPTls> = { starttls: SMTPTls.SMTP_TLS_STARTTLS, implicit: SMTPTls.SMTP_TLS_IMPLICIT, none: SMTPTls.SMTP_TLS_NONE };

export const EMPTY_SMTP: SmtpValues = {
  description: "",
  kind: "smtp",
  host: "",
  port: "",
  tls: "starttls",
  user: "",
  password: "",
  senderAddress: "",
  senderName: "",
  replyToAddress: "",
  url: "",
};

export function smtpValues(p: GetSMTPProvider): SmtpValues {
  const values = { ...EMPTY_SMTP, description: p.description };
  if (p.kind.case === "http") return { ...values, kind: "http", url: p.kind.value.url };
  if (p.kind.case !== "smtp") return values;
  const { host, port, tls, user, senderAddress, senderName, replyToAddress } = p.kind.value;
  return {
    ...values,
    host,
    port: String(port),
    tls: (Object.keys(TLS) as Tls[]).find((mode) => TLS[mode] === tls) ?? "starttls",
    user,
    senderAddress,
    senderName,
    replyToAddress,
  };
}

function smtpConfig(v: SmtpValues) {
  return {
    host: v.host.trim(),
    port: Number(v.port || 0),
    tls: TLS[v.tls],
    user: v.user.trim(),
    password: v.password,
    senderAddress: v.senderAddress.trim(),
    senderName: v.senderName.trim(),
    replyToAddress: v.replyToAddress.trim(),
  };
}

export function smtpProvider(v: SmtpValues): MessageInitShape<typeof SMTPProviderSchema> {
  return providerOf(v, () => ({ case: "smtp" as const, value: smtpConfig(v) }));
}

/** The settings that aim a stored password at a server: changing one needs the password again (the API keeps it only for where it was given). */
const AIMING = ["host", "port", "tls", "user"] as const;

/** Whether these values, saved over those, need the password typed again. No user: no password either. */
export function needsPassword(saved: SmtpValues, passwordSet: boolean, v: SmtpValues): boolean {
  const next = smtpConfig(v);
  const before = smtpConfig(saved);
  return (
    passwordSet &&
    saved.kind === "smtp" &&
    v.kind === "smtp" &&
    next.user !== "" &&
    v.password === "" &&
    AIMING.some((setting) => next[setting] !== before[setting])
  );
}

/**
 * The patch from the saved values to these: of an SMTP server only what changed (an untouched
 * port stays the TLS mode's default rather than the number shown), the password when typed,
 * or emptied with the user (no user, no password); every setting for a provider that becomes one.
 */
export function smtpPatch(saved: SmtpValues, v: SmtpValues): MessageInitShape<typeof PatchSMTPProviderSchema> {
  return patchOf(saved, v, () => {
    if (saved.kind !== "smtp") return { case: "smtp" as const, value: smtpConfig(v) };
    const next = smtpConfig(v);
    const settings: MessageInitShape<typeof PatchSMTPConfigSchema> = {
      ...changed(smtpConfig(saved), next),
      ...(next.user === "" && saved.user !== "" && { password: "" }),
    };
    return Object.keys(settings).length > 0 ? { case: "smtp" as const, value: settings } : undefined;
  });
}

export const smtpRow = (p: GetSMTPProvider): ProviderRow =>
  rowOf(p, () => (p.kind.case === "smtp" ? { kind: "SMTP", where: `${p.kind.value.host}:${p.kind.value.port}` } : { kind: "", where: "" }));
