import { baseUrl, ConfigError, duration, integer } from "./env.js";

/** How providers send (src/engines/notifications/providers/; docs/api.md "SMTP and SMS providers"). */
export interface NotificationProviderSettings {
  /** Sends an instance's emails while it has no active SMTP provider; trusted (no address policy). */
  systemSmtp: SystemSmtp | undefined;
  /** A CA file trusted beside the system's roots, for relays with a private CA. */
  smtpCaPath: string | undefined;
  /** Bounds each email: connecting, the SMTP dialogue and handing the message over. */
  smtpTimeoutMs: number;
  /** Pooled SMTP transports (one per provider and version) kept per process, the least used closed first. */
  smtpPoolSize: number;
  /** Connections each pooled transport may open at once. */
  smtpMaxConnections: number;
  /** Base of Twilio's API; tests point it at a local fake. */
  twilioApiUrl: string;
}

interface SystemSmtp {
  host: string;
  port: number;
  tls: "none" | "starttls" | "implicit";
  user: string;
  password: string;
  senderAddress: string;
  senderName: string;
}

export function notificationProviderSettings(env: NodeJS.ProcessEnv): NotificationProviderSettings {
  return {
    systemSmtp: systemSmtp(env.PLATFORM_SMTP_URL, env.PLATFORM_SMTP_FROM),
    smtpCaPath: env.PLATFORM_SMTP_CA_PATH || undefined,
    smtpTimeoutMs: duration(env, "PLATFORM_SMTP_TIMEOUT", "30s", 5 * 60_000),
    smtpPoolSize: integer(env, "PLATFORM_SMTP_POOL_SIZE", 100, 1, 100_000),
    smtpMaxConnections: integer(env, "PLATFORM_SMTP_MAX_CONNECTIONS", 3, 1, 100),
    twilioApiUrl: baseUrl(env, "PLATFORM_TWILIO_API_URL", "https://api.twilio.com"),
  };
}

const TLS_BY_SCHEME: Record<string, SystemSmtp["tls"]> = { "smtp:": "starttls", "smtps:": "implicit" };

/**
 * `smtp://user:password@host:587` (STARTTLS, required), `smtps://…:465` (TLS from the first
 * byte), `smtp://host:25?tls=none` (a relay without TLS); user and password URL-encoded.
 */
function systemSmtp(raw: string | undefined, from: string | undefined): SystemSmtp | undefined {
  if (!raw) {
    if (from) throw new ConfigError("PLATFORM_SMTP_FROM needs PLATFORM_SMTP_URL");
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("PLATFORM_SMTP_URL must be a URL such as smtp://user:password@host:587");
  }
  const scheme = TLS_BY_SCHEME[url.protocol];
  const asked = url.searchParams.get("tls");
  const tls = asked === "none" && scheme === "starttls" ? "none" : scheme;
  // The URL may hold a password: errors name its parts, never echo it.
  if (!tls || !url.hostname || (asked !== null && tls !== "none")) {
    throw new ConfigError("PLATFORM_SMTP_URL must be smtp://[user:password@]host[:port][?tls=none] or smtps://[user:password@]host[:port]");
  }
  if (!from) throw new ConfigError("PLATFORM_SMTP_FROM is required with PLATFORM_SMTP_URL (an address, or Name <address>)");
  const sender = /^\s*(?:(.*?)\s*<([^<>\s]+@[^<>\s]+)>|([^<>\s]+@[^<>\s]+))\s*$/.exec(from);
  if (!sender) throw new ConfigError(`PLATFORM_SMTP_FROM must be an address, or Name <address>, not "${from}"`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : tls === "implicit" ? 465 : 587,
    tls,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    senderAddress: sender[2] ?? sender[3]!,
    senderName: (sender[1] ?? "").replace(/^"|"$/g, ""),
  };
}
