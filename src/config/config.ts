import { checkLoginUiUrl } from "../domain/settings/login.js";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { DatabaseTarget } from "../store/database.js";
import { randomAlphanumeric } from "../crypto/tokens.js";
import type { Argon2Params } from "../crypto/passwords.js";
import type { SignInLogSettings } from "../domain/audit/sign-in-log.js";
import { FEATURE_DEFAULTS, isFeatureName, type FeatureSet } from "../domain/feature/catalog.js";
import { notificationProviderSettings, type NotificationProviderSettings } from "./notification-providers.js";
import { baseUrl, boolean, ConfigError, dnsServers, duration, HOUR_MS, hostPort, integer, TEN_YEARS_MS, url } from "./env.js";

export { ConfigError };

export interface Config {
  port: number;
  bind: string;
  externalUrl: URL;
  database: DatabaseTarget;
  dataDir: string;
  /** Unset only with PGlite, where resolveMasterKey generates one into the data dir. */
  masterKey: string | undefined;
  adminPatPath: string;
  /** Where bootstrap writes the first human administrator's invitation link (PLATFORM_ADMIN_INVITE_PATH). */
  adminInvitePath: string;
  /** That administrator's email address (PLATFORM_ADMIN_EMAIL; admin@ the external host by default). */
  adminEmail: string;
  workers: number;
  logLevel: string;
  tls: { certPath: string; keyPath: string } | undefined;
  /** Origins allowed for browser calls; ["*"] allows any. */
  corsOrigins: string[];
  maxBodyBytes: number;
  /** System defaults of the feature flags. */
  features: FeatureSet;
  http: HttpLimits;
  /** Open grpc.health.v1.Health/Watch streams per process; further ones are ResourceExhausted. */
  maxWatchStreams: number;
  /** PlatformEvents/WatchEvents: how its streams poll and how long they last (rpc/services/events/watch.ts). */
  eventWatch: { pollMs: number; heartbeatMs: number; maxDurationMs: number; perInstance: number };
  /** Sign-in events are deleted after the instance's audit log retention, or this where it has none, every sweep interval (domain/audit/retention.ts). */
  signInRetention: { retentionMs: number; sweepIntervalMs: number };
  db: DatabaseLimits;
  /** /ready and the gRPC health check answer within this, saying not ready when the database did not. */
  healthTimeoutMs: number;
  /** Where GET /metrics answers, off the tenant port; undefined turns it off. */
  metricsBind: { host: string; port: number } | undefined;
  /**
   * PLATFORM_METRICS_BIND was not set: the default port may belong to another service on the
   * host, and then the service runs without metrics instead of failing to start.
   */
  metricsBindDefaulted: boolean;
  /** Lifetime of the personal access token written at bootstrap. */
  bootstrapPatExpiresMs: number;
  /** Argon2id cost of new password hashes (docs/passwords.md). */
  passwords: Argon2Params;
  oidc: OidcSettings;
  login: LoginLimits;
  unknownLookups: UnknownLookupLimits;
  outbound: OutboundSettings;
  externalLogin: ExternalLoginSettings;
  actions: ActionSettings;
  notificationProviders: NotificationProviderSettings;
  notifications: NotificationOutboxSettings;
  domainValidation: DomainValidationSettings;
  /** Branding settings (src/domain/settings/branding.ts). */
  branding: BrandingLimits;
  /** The audit log's sign-in events (src/domain/audit/sign-in-log.ts). */
  signInLog: SignInLogSettings;
}

export interface BrandingLimits {
  /** Larger logos and icons are InvalidArgument; the request body limit applies too. */
  maxImageBytes: number;
}

/** Proving that an organization owns a domain (src/domain/org-domain/validation.ts). */
export interface DomainValidationSettings {
  /** ValidateDomain accepts a token this long after it was generated. */
  tokenTtlMs: number;
  /** Servers asked for TXT records and, when set, for the address of the HTTP check; undefined: the system's. */
  dnsServers: string[] | undefined;
  /** Bounds one DNS lookup. */
  dnsTimeoutMs: number;
  /** Ports the HTTP check calls: 443 and 80 but where the service reaches the web through a port mapping, or in tests. */
  httpsPort: number;
  httpPort: number;
}

/** The outbox of messages (src/notifications/outbox/) and the codes they carry. */
export interface NotificationOutboxSettings {
  /** A message not sent this long after it was written fails (and at the latest when its code expires). */
  maxAgeMs: number;
  /** How long an idle worker waits before looking for due messages again. */
  pollIntervalMs: number;
  /** Messages in flight at once per process. */
  concurrency: number;
  /** Sent and failed messages leave the log this long after they were written, unless the instance's audit log retention says otherwise. */
  retentionMs: number;
  /** How often each process sweeps the log (and wipes the content of expired failed messages). */
  sweepIntervalMs: number;
  /** How long a code lasts: verification and reset codes per channel, invitations. */
  codeTtlMs: { email: number; sms: number; invite: number; otp: number };
  /** At most one password reset code per user this often. */
  resetIntervalMs: number;
  /** The login pages answer a reset request no sooner than this, found or not, so that timing tells nothing. */
  resetAnswerMs: number;
}

/** Calls of action targets (src/actions/). */
export interface ActionSettings {
  /** After a target's signing key is regenerated, calls carry a signature by the old key too for this long. */
  signingKeyGraceMs: number;
  /** Event executions' deliveries (actions/delivery-worker.ts). */
  delivery: DeliverySettings;
}

export interface DeliverySettings {
  /** A delivery that has not succeeded this long after its event (or its RetryDelivery) fails for good. */
  maxAgeMs: number;
  /** How long an idle worker waits before looking for due deliveries again. */
  pollIntervalMs: number;
  /** Calls in flight at once per process. */
  concurrency: number;
  /** Delivered and failed deliveries are removed this long after their event, unless the instance's audit log retention says otherwise. */
  retentionMs: number;
  /** How often each process removes deliveries past their retention. */
  sweepIntervalMs: number;
}

/** Calls to other servers (upstream identity providers; src/http/outbound.ts). */
export interface OutboundSettings {
  /** Loopback, private, link-local and metadata addresses may be called (tests, on-premises). */
  allowPrivate: boolean;
  /** Bounds each call, connecting to reading the whole answer. */
  timeoutMs: number;
  /** Longer answers are an error. */
  maxResponseBytes: number;
}

/** Upstream identity providers of external login (src/oidc/login/external/; docs/oidc.md). */
export interface ExternalLoginSettings {
  /** Discovery documents and JWKS are kept at most this long, whatever their Cache-Control allows; 0: never. */
  cacheMaxAgeMs: number;
  /** How long one whose Cache-Control has no max-age (nor no-store or no-cache) is kept. */
  cacheDefaultAgeMs: number;
  /** Documents kept per process, the oldest going first. */
  cacheSize: number;
  /** Longer documents are used but not kept (with cacheSize, this bounds the memory they take). */
  cacheMaxDocumentBytes: number;
  /** An ID token signed by a key the kept JWKS lacks refetches it, at most once per this per provider. */
  jwksRefetchIntervalMs: number;
  /** GitHub's web address (authorization, token endpoint) and its API's (user, emails). */
  githubUrl: string;
  githubApiUrl: string;
  /** An API intent must come back from the provider this long after its start, and its token is usable this long after that. */
  intentTtlMs: number;
}

/**
 * Host names and bearer tokens that nobody knows (src/cache/unknown-lookups.ts): a client may
 * send any, and each would cost a database lookup.
 */
export interface UnknownLookupLimits {
  /** A miss is remembered this long (and until the next change of access); 0: not at all. */
  cacheTtlMs: number;
  /** Misses remembered per cache (hosts; tokens), the oldest going first; 0: none. */
  cacheSize: number;
  /** Lookups that find nothing, per minute and client address, per process; 0: unlimited. */
  perIpPerMinute: number;
}

/** Guessing passwords on the login pages (docs/oidc.md). */
export interface LoginLimits {
  /** Failed passwords in a row that lock the user; 0 never locks. */
  maxPasswordAttempts: number;
  /** Password attempts per minute from one address, per process; 0: unlimited. */
  perIpPerMinute: number;
  /** Password attempts per minute at one login name, per process; 0: unlimited. */
  perLoginNamePerMinute: number;
  /** Checks per minute of one session of the session API, per process; 0: unlimited. */
  perSessionPerMinute: number;
  /** The system default of the login settings' login_ui_url; empty: the built-in pages. */
  loginUiUrl: string;
}

/** The OpenID Connect provider's lifetimes, keys and caches (docs/oidc.md). */
export interface OidcSettings {
  accessTokenTtlS: number;
  idTokenTtlS: number;
  refreshTokenTtlS: number;
  signingAlg: "ES256" | "RS256";
  keyRotateEveryMs: number;
  keyPublishAheadMs: number;
  /** Cache-Control max-age of the JWKS; must stay below the publication lead. */
  jwksMaxAgeS: number;
  /** Providers (one per issuer) kept in memory. */
  providerCacheSize: number;
  /** How often expired OpenID Connect rows are deleted. */
  sweepIntervalMs: number;
}

/** Bounds of the connection layer; every one an environment variable (README). */
export interface HttpLimits {
  /** A request head (on a new connection: its first bytes and the HTTP/2 preface) must arrive within this. */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** Idle keep-alive connections and idle HTTP/2 sessions close after this. */
  idleTimeoutMs: number;
  /** Connections over this are closed at once. */
  maxConnections: number;
  /** Concurrent streams per HTTP/2 session; more are refused with REFUSED_STREAM. */
  http2MaxStreams: number;
  /** Memory one HTTP/2 session may buffer, in MiB (node's maxSessionMemory). */
  http2MaxSessionMemoryMb: number;
  /** On shutdown, in-flight requests get this long before their connections are cut. */
  shutdownGraceMs: number;
  /** The whole shutdown (the grace, then the workers, caches and database): past it the process exits with 1. */
  shutdownTimeoutMs: number;
}

/** Bounds of the database work; see src/store/database.ts for where each applies. */
export interface DatabaseLimits {
  /** Connecting to PostgreSQL, and waiting for a free pooled connection. */
  connectTimeoutMs: number;
  /** PostgreSQL statement_timeout and lock_timeout on request connections. */
  statementTimeoutMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout. */
  idleInTransactionTimeoutMs: number;
  /** Connections per process in the pg pool. */
  poolMax: number;
  /** Statement texts prepared on the server per process (store/pg/statement-names.ts); 0: only the store's own prepared queries. */
  preparedStatementsMax: number;
  /** Pooled connections that statements outside transactions share (store/pg/shared-connections.ts); 0: none. At most poolMax − 1 are used. */
  sharedConnections: number;
  /** Statements in flight on one shared connection at most; more take a connection of their own. */
  sharedQueueMax: number;
  /** No statement queues behind one in flight this long on a shared connection. */
  sharedSlowHeadMs: number;
  /** How often a command is retried after a serialization failure or deadlock before Aborted. */
  conflictRetries: number;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, "PLATFORM_PORT", 8080, 0, 65535);
  const dataDir = env.PLATFORM_DATA_DIR || "./data";
  const externalUrl = url(env, "PLATFORM_EXTERNAL_URL", `http://localhost:${port}`);
  const shutdownGraceMs = integer(env, "PLATFORM_SHUTDOWN_GRACE_MS", 10_000, 0, HOUR_MS);
  const databaseUrl = env.DATABASE_URL;
  const masterKey = env.PLATFORM_MASTERKEY || undefined;
  if (masterKey !== undefined) checkMasterKey(masterKey);
  if (databaseUrl && !masterKey) {
    throw new ConfigError("PLATFORM_MASTERKEY is required with DATABASE_URL (exactly 32 characters)");
  }
  const workers = integer(env, "PLATFORM_WORKERS", 1, 1, 256);
  if (workers > 1 && !databaseUrl) {
    throw new ConfigError("PLATFORM_WORKERS > 1 needs DATABASE_URL: embedded PGlite serves one process");
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not "${logLevel}"`);
  }
  const cert = env.PLATFORM_TLS_CERT_PATH;
  const key = env.PLATFORM_TLS_KEY_PATH;
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError("PLATFORM_TLS_CERT_PATH and PLATFORM_TLS_KEY_PATH go together");
  }
  return {
    port,
    bind: env.PLATFORM_BIND || "0.0.0.0",
    externalUrl,
    database: databaseUrl ? { kind: "postgres", url: databaseUrl } : { kind: "pglite", dataDir: join(dataDir, "pgdata") },
    dataDir,
    masterKey,
    adminPatPath: env.PLATFORM_ADMIN_PAT_PATH || join(dataDir, "admin.pat"),
    adminInvitePath: env.PLATFORM_ADMIN_INVITE_PATH || join(dataDir, "admin-invite.url"),
    adminEmail: adminEmail(env.PLATFORM_ADMIN_EMAIL, externalUrl),
    workers,
    logLevel,
    tls: cert && key ? { certPath: cert, keyPath: key } : undefined,
    corsOrigins: (env.PLATFORM_CORS_ORIGINS || "*").split(",").map((o) => o.trim()).filter(Boolean),
    maxBodyBytes: integer(env, "PLATFORM_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    features: features(env.PLATFORM_FEATURES),
    http: {
      headersTimeoutMs: integer(env, "PLATFORM_HTTP_HEADERS_TIMEOUT_MS", 10_000, 100, HOUR_MS),
      requestTimeoutMs: integer(env, "PLATFORM_HTTP_REQUEST_TIMEOUT_MS", 60_000, 100, HOUR_MS),
      idleTimeoutMs: integer(env, "PLATFORM_HTTP_IDLE_TIMEOUT_MS", 65_000, 100, HOUR_MS),
      maxConnections: integer(env, "PLATFORM_MAX_CONNECTIONS", 10_000, 1, 1_000_000),
      http2MaxStreams: integer(env, "PLATFORM_HTTP2_MAX_STREAMS", 100, 1, 10_000),
      http2MaxSessionMemoryMb: integer(env, "PLATFORM_HTTP2_MAX_SESSION_MEMORY_MB", 10, 1, 1024),
      shutdownGraceMs,
      shutdownTimeoutMs: integer(env, "PLATFORM_SHUTDOWN_TIMEOUT_MS", shutdownGraceMs + 20_000, shutdownGraceMs + 1_000, 2 * HOUR_MS),
    },
    maxWatchStreams: integer(env, "PLATFORM_MAX_WATCH_STREAMS", 1000, 0, 1_000_000),
    eventWatch: {
      pollMs: duration(env, "PLATFORM_EVENTS_WATCH_POLL_INTERVAL", "1s", 60_000, 50),
      heartbeatMs: duration(env, "PLATFORM_EVENTS_WATCH_HEARTBEAT", "15s", HOUR_MS, 100),
      maxDurationMs: duration(env, "PLATFORM_EVENTS_WATCH_MAX_DURATION", "1h", 24 * HOUR_MS, 1000),
      perInstance: integer(env, "PLATFORM_EVENTS_WATCH_PER_INSTANCE", 10, 0, 10_000),
    },
    signInRetention: {
      retentionMs: duration(env, "PLATFORM_AUDIT_SIGNIN_RETENTION", "2160h", TEN_YEARS_MS, 60_000),
      sweepIntervalMs: duration(env, "PLATFORM_AUDIT_SIGNIN_SWEEP_INTERVAL", "10m", 24 * HOUR_MS, 100),
    },
    db: {
      connectTimeoutMs: integer(env, "PLATFORM_DB_CONNECT_TIMEOUT_MS", 5_000, 100, HOUR_MS),
      statementTimeoutMs: integer(env, "PLATFORM_DB_STATEMENT_TIMEOUT_MS", 30_000, 100, HOUR_MS),
      idleInTransactionTimeoutMs: integer(env, "PLATFORM_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS", 60_000, 100, HOUR_MS),
      poolMax: integer(env, "PLATFORM_DB_POOL_MAX", 20, 1, 1000),
      preparedStatementsMax: integer(env, "PLATFORM_DB_PREPARED_STATEMENTS_MAX", 500, 0, 100_000),
      sharedConnections: integer(env, "PLATFORM_DB_SHARED_CONNECTIONS", 2, 0, 100),
      sharedQueueMax: integer(env, "PLATFORM_DB_SHARED_QUEUE_MAX", 16, 1, 10_000),
      sharedSlowHeadMs: integer(env, "PLATFORM_DB_SHARED_SLOW_HEAD_MS", 10, 0, HOUR_MS),
      conflictRetries: integer(env, "PLATFORM_DB_CONFLICT_RETRIES", 3, 0, 20),
    },
    healthTimeoutMs: integer(env, "PLATFORM_HEALTH_TIMEOUT_MS", 2_000, 50, 60_000),
    metricsBind: hostPort(env, "PLATFORM_METRICS_BIND", "127.0.0.1:9090"),
    // Unset, not empty: empty turns metrics off on purpose.
    metricsBindDefaulted: env.PLATFORM_METRICS_BIND === undefined,
    bootstrapPatExpiresMs: duration(env, "PLATFORM_BOOTSTRAP_PAT_EXPIRES", "8760h", TEN_YEARS_MS),
    passwords: {
      memoryKiB: integer(env, "PLATFORM_PASSWORD_ARGON2_MEMORY_KIB", 19_456, 1024, 4_194_304),
      iterations: integer(env, "PLATFORM_PASSWORD_ARGON2_ITERATIONS", 2, 1, 100),
      parallelism: integer(env, "PLATFORM_PASSWORD_ARGON2_PARALLELISM", 1, 1, 16),
    },
    oidc: oidcSettings(env),
    login: {
      maxPasswordAttempts: integer(env, "PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS", 10, 0, 1000),
      perIpPerMinute: integer(env, "PLATFORM_LOGIN_RATE_PER_IP", 60, 0, 1_000_000),
      perLoginNamePerMinute: integer(env, "PLATFORM_LOGIN_RATE_PER_LOGIN_NAME", 20, 0, 1_000_000),
      perSessionPerMinute: integer(env, "PLATFORM_SESSION_RATE_PER_SESSION", 10, 0, 1_000_000),
      loginUiUrl: loginUiUrl(env.PLATFORM_OIDC_LOGIN_UI_URL ?? ""),
    },
    unknownLookups: {
      cacheTtlMs: integer(env, "PLATFORM_UNKNOWN_CACHE_TTL_MS", 5_000, 0, 60_000),
      cacheSize: integer(env, "PLATFORM_UNKNOWN_CACHE_SIZE", 10_000, 0, 1_000_000),
      perIpPerMinute: integer(env, "PLATFORM_UNKNOWN_LOOKUPS_PER_IP", 600, 0, 1_000_000),
    },
    outbound: {
      allowPrivate: boolean(env, "PLATFORM_OUTBOUND_ALLOW_PRIVATE", false),
      timeoutMs: duration(env, "PLATFORM_OUTBOUND_TIMEOUT", "10s", 5 * 60_000),
      maxResponseBytes: integer(env, "PLATFORM_OUTBOUND_MAX_RESPONSE_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    },
    externalLogin: {
      cacheMaxAgeMs: duration(env, "PLATFORM_IDP_CACHE_MAX_AGE", "1h", 24 * HOUR_MS, 0),
      cacheDefaultAgeMs: duration(env, "PLATFORM_IDP_CACHE_DEFAULT_AGE", "5m", 24 * HOUR_MS, 0),
      cacheSize: integer(env, "PLATFORM_IDP_CACHE_SIZE", 1000, 1, 1_000_000),
      cacheMaxDocumentBytes: integer(env, "PLATFORM_IDP_CACHE_MAX_DOCUMENT_BYTES", 65_536, 0, 64 * 1024 * 1024),
      jwksRefetchIntervalMs: duration(env, "PLATFORM_IDP_JWKS_REFETCH_INTERVAL", "30s", HOUR_MS),
      githubUrl: baseUrl(env, "PLATFORM_GITHUB_URL", "https://github.com"),
      githubApiUrl: baseUrl(env, "PLATFORM_GITHUB_API_URL", "https://api.github.com"),
      intentTtlMs: duration(env, "PLATFORM_IDP_INTENT_TTL", "10m", 24 * HOUR_MS),
    },
    actions: {
      signingKeyGraceMs: duration(env, "PLATFORM_ACTIONS_SIGNING_KEY_GRACE", "1h", 720 * HOUR_MS),
      delivery: {
        maxAgeMs: duration(env, "PLATFORM_ACTIONS_DELIVERY_MAX_AGE", "24h", 720 * HOUR_MS),
        pollIntervalMs: duration(env, "PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL", "1s", HOUR_MS, 10),
        concurrency: integer(env, "PLATFORM_ACTIONS_DELIVERY_CONCURRENCY", 10, 1, 1000),
        retentionMs: duration(env, "PLATFORM_ACTIONS_DELIVERY_RETENTION", "720h", TEN_YEARS_MS),
        sweepIntervalMs: duration(env, "PLATFORM_ACTIONS_DELIVERY_SWEEP_INTERVAL", "5m", 24 * HOUR_MS, 100),
      },
    },
    notificationProviders: notificationProviderSettings(env),
    notifications: {
      maxAgeMs: duration(env, "PLATFORM_NOTIFICATION_MAX_AGE", "1h", 720 * HOUR_MS),
      pollIntervalMs: duration(env, "PLATFORM_NOTIFICATION_POLL_INTERVAL", "1s", HOUR_MS, 10),
      concurrency: integer(env, "PLATFORM_NOTIFICATION_CONCURRENCY", 10, 1, 1000),
      retentionMs: duration(env, "PLATFORM_NOTIFICATION_RETENTION", "720h", TEN_YEARS_MS),
      sweepIntervalMs: duration(env, "PLATFORM_NOTIFICATION_SWEEP_INTERVAL", "5m", 24 * HOUR_MS, 100),
      codeTtlMs: {
        email: duration(env, "PLATFORM_CODE_TTL_EMAIL", "1h", 720 * HOUR_MS),
        sms: duration(env, "PLATFORM_CODE_TTL_PHONE", "10m", 24 * HOUR_MS),
        invite: duration(env, "PLATFORM_CODE_TTL_INVITE", "72h", 720 * HOUR_MS),
        otp: duration(env, "PLATFORM_CODE_TTL_OTP", "5m", HOUR_MS),
      },
      resetIntervalMs: duration(env, "PLATFORM_PASSWORD_RESET_INTERVAL", "1m", 24 * HOUR_MS, 0),
      resetAnswerMs: duration(env, "PLATFORM_PASSWORD_RESET_ANSWER_TIME", "500ms", 10_000, 0),
    },
    domainValidation: {
      tokenTtlMs: duration(env, "PLATFORM_DOMAIN_VALIDATION_TTL", "72h", 720 * HOUR_MS, 60_000),
      dnsServers: dnsServers(env, "PLATFORM_DNS_SERVERS"),
      dnsTimeoutMs: duration(env, "PLATFORM_DNS_TIMEOUT", "5s", 60_000, 100),
      httpsPort: integer(env, "PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT", 443, 1, 65535),
      httpPort: integer(env, "PLATFORM_DOMAIN_VALIDATION_HTTP_PORT", 80, 1, 65535),
    },
    branding: {
      maxImageBytes: integer(env, "PLATFORM_BRANDING_MAX_IMAGE_BYTES", 512 * 1024, 1024, 64 * 1024 * 1024),
    },
    signInLog: {
      windowMs: duration(env, "PLATFORM_AUDIT_SIGNIN_WINDOW", "1m", 24 * HOUR_MS),
      burst: integer(env, "PLATFORM_AUDIT_SIGNIN_BURST", 10, 0, 1_000_000),
      keys: integer(env, "PLATFORM_AUDIT_SIGNIN_KEYS", 10_000, 1, 10_000_000),
      buffer: integer(env, "PLATFORM_AUDIT_SIGNIN_BUFFER", 10_000, 1, 10_000_000),
      flushIntervalMs: duration(env, "PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL", "250ms", 60_000, 10),
    },
  };
}

function oidcSettings(env: NodeJS.ProcessEnv): OidcSettings {
  const signingAlg = env.PLATFORM_OIDC_SIGNING_ALG || "RS256";
  if (signingAlg !== "RS256" && signingAlg !== "ES256") throw new ConfigError(`PLATFORM_OIDC_SIGNING_ALG must be RS256 or ES256, not "${signingAlg}"`);
  const settings: OidcSettings = {
    accessTokenTtlS: duration(env, "PLATFORM_OIDC_ACCESS_TOKEN_TTL", "1h", 24 * HOUR_MS) / 1000,
    idTokenTtlS: duration(env, "PLATFORM_OIDC_ID_TOKEN_TTL", "1h", 24 * HOUR_MS) / 1000,
    refreshTokenTtlS: duration(env, "PLATFORM_OIDC_REFRESH_TOKEN_TTL", "720h", 8760 * HOUR_MS) / 1000,
    signingAlg,
    keyRotateEveryMs: duration(env, "PLATFORM_OIDC_KEY_ROTATE_EVERY", "24h", 8760 * HOUR_MS),
    keyPublishAheadMs: duration(env, "PLATFORM_OIDC_KEY_PUBLISH_AHEAD", "1h", 24 * HOUR_MS),
    jwksMaxAgeS: duration(env, "PLATFORM_OIDC_JWKS_MAX_AGE", "5m", 24 * HOUR_MS) / 1000,
    providerCacheSize: integer(env, "PLATFORM_OIDC_PROVIDER_CACHE_SIZE", 100, 1, 100_000),
    sweepIntervalMs: duration(env, "PLATFORM_OIDC_SWEEP_INTERVAL", "5m", 24 * HOUR_MS),
  };
  // A relying party caching the JWKS for longer than a new key's lead could meet a token
  // signed by a key it has never seen.
  if (settings.jwksMaxAgeS * 1000 >= settings.keyPublishAheadMs) {
    throw new ConfigError("PLATFORM_OIDC_JWKS_MAX_AGE must be shorter than PLATFORM_OIDC_KEY_PUBLISH_AHEAD");
  }
  if (settings.keyPublishAheadMs >= settings.keyRotateEveryMs) {
    throw new ConfigError("PLATFORM_OIDC_KEY_PUBLISH_AHEAD must be shorter than PLATFORM_OIDC_KEY_ROTATE_EVERY");
  }
  return settings;
}

/** With PGlite and no PLATFORM_MASTERKEY, a key is generated once into the data dir. */
export async function resolveMasterKey(config: Config): Promise<string> {
  if (config.masterKey) return config.masterKey;
  const path = join(config.dataDir, "masterkey");
  try {
    const key = (await readFile(path, "utf8")).trim();
    checkMasterKey(key, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomAlphanumeric(32);
  await writeFile(path, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

function loginUiUrl(raw: string): string {
  try {
    return checkLoginUiUrl(raw, "PLATFORM_OIDC_LOGIN_UI_URL");
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function checkMasterKey(key: string, source = "PLATFORM_MASTERKEY"): void {
  if (Buffer.byteLength(key, "utf8") !== 32) {
    throw new ConfigError(`${source} must be exactly 32 ASCII characters, got ${key.length}`);
  }
}

/** `PLATFORM_FEATURES=token_exchange=on,actions=off` changes the system defaults. */
function features(raw: string | undefined): FeatureSet {
  const set: FeatureSet = { ...FEATURE_DEFAULTS };
  for (const item of (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const [name, value] = item.split("=");
    if (!name || !isFeatureName(name) || (value !== "on" && value !== "off")) {
      throw new ConfigError(
        `PLATFORM_FEATURES item "${item}" must be <flag>=on|off with a flag of ${Object.keys(FEATURE_DEFAULTS).join(", ")}`,
      );
    }
    set[name] = value === "on";
  }
  return set;
}

/** The first human administrator's address: given, or admin@ the external host. */
function adminEmail(given: string | undefined, externalUrl: URL): string {
  const email = given?.trim() || `admin@${externalUrl.hostname.replace(/^\[|\]$/g, "")}`;
  if (!/^[^\s@]{1,64}@[^\s@]{1,253}$/.test(email)) throw new ConfigError(`PLATFORM_ADMIN_EMAIL: "${email}" is not an email address`);
  return email;
}
