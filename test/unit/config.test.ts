import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { resolveMasterKey } from "../../src/config/master-key.js";
import { FEATURE_DEFAULTS } from "../../src/domain/feature/catalog.js";

const KEY = "0123456789abcdef0123456789abcdef";

/** The ConfigError loadConfig throws for env; fails the test when it does not throw one. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

describe("loadConfig defaults (ARCHITECTURE.md section 1)", () => {
  it("uses the documented defaults for an empty environment", () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.bind).toBe("0.0.0.0");
    expect(config.externalUrl.href).toBe("http://localhost:8080/");
    expect(config.externalUrl.hostname).toBe("localhost");
    expect(config.dataDir).toBe("./data");
    expect(config.database).toEqual({ kind: "pglite", dataDir: join("./data", "pgdata") });
    expect(config.masterKey).toBeUndefined();
    expect(config.adminPatPath).toBe(join("./data", "admin.pat"));
    expect(config.workers).toBe(1);
    expect(config.logLevel).toBe("info");
    expect(config.tls).toBeUndefined();
    expect(config.features).toEqual(FEATURE_DEFAULTS);
  });

  it("treats empty variables as unset", () => {
    expect(loadConfig({ PLATFORM_PORT: "", LOG_LEVEL: "", PLATFORM_MASTERKEY: "", PLATFORM_EXTERNAL_URL: "" })).toMatchObject({
      port: 8080,
      logLevel: "info",
      masterKey: undefined,
    });
  });

  it("derives the external URL from the port and the PAT path from the data dir", () => {
    const config = loadConfig({ PLATFORM_PORT: "9000", PLATFORM_DATA_DIR: "/var/lib/platform" });
    expect(config.externalUrl.href).toBe("http://localhost:9000/");
    expect(config.adminPatPath).toBe("/var/lib/platform/admin.pat");
    expect(config.database).toEqual({ kind: "pglite", dataDir: "/var/lib/platform/pgdata" });
  });

  it("reads every variable", () => {
    const config = loadConfig({
      PLATFORM_PORT: "0",
      PLATFORM_BIND: "127.0.0.1",
      PLATFORM_EXTERNAL_URL: "https://id.example.com",
      DATABASE_URL: "postgres://u@db/platform",
      PLATFORM_MASTERKEY: KEY,
      PLATFORM_ADMIN_PAT_PATH: "/run/secrets/admin.pat",
      PLATFORM_WORKERS: "4",
      LOG_LEVEL: "debug",
      PLATFORM_TLS_CERT_PATH: "/tls/cert.pem",
      PLATFORM_TLS_KEY_PATH: "/tls/key.pem",
      PLATFORM_FEATURES: "token_exchange=on, actions=off",
    });
    expect(config).toMatchObject({
      port: 0,
      bind: "127.0.0.1",
      database: { kind: "postgres", url: "postgres://u@db/platform" },
      masterKey: KEY,
      adminPatPath: "/run/secrets/admin.pat",
      workers: 4,
      logLevel: "debug",
      tls: { certPath: "/tls/cert.pem", keyPath: "/tls/key.pem" },
      features: { ...FEATURE_DEFAULTS, token_exchange: true, actions: false },
    });
    expect(config.externalUrl.hostname).toBe("id.example.com");
  });

  it("reads the settings of external login, GitHub's addresses without a trailing slash", () => {
    expect(loadConfig({}).externalLogin).toEqual({
      cacheMaxAgeMs: 3_600_000,
      cacheDefaultAgeMs: 300_000,
      cacheSize: 1000,
      cacheMaxDocumentBytes: 65_536,
      jwksRefetchIntervalMs: 30_000,
      githubUrl: "https://github.com",
      githubApiUrl: "https://api.github.com",
      azureAdUrl: "https://login.microsoftonline.com",
      appleUrl: "https://appleid.apple.com",
      intentTtlMs: 600_000,
      ldapMaxTimeoutMs: 10_000,
      samlClockSkewMs: 60_000,
    });
    const env = {
      PLATFORM_IDP_CACHE_MAX_AGE: "0s",
      PLATFORM_IDP_CACHE_DEFAULT_AGE: "1m",
      PLATFORM_IDP_CACHE_SIZE: "5",
      PLATFORM_IDP_CACHE_MAX_DOCUMENT_BYTES: "1024",
      PLATFORM_IDP_JWKS_REFETCH_INTERVAL: "2m",
      PLATFORM_GITHUB_URL: "http://127.0.0.1:9999/",
      PLATFORM_GITHUB_API_URL: "http://127.0.0.1:9999/api/",
      PLATFORM_AZURE_AD_URL: "http://127.0.0.1:9998/",
      PLATFORM_APPLE_URL: "http://127.0.0.1:9997",
      PLATFORM_IDP_INTENT_TTL: "90s",
      PLATFORM_LDAP_MAX_TIMEOUT: "2500ms",
      PLATFORM_SAML_CLOCK_SKEW: "0s",
    };
    expect(loadConfig(env).externalLogin).toEqual({
      cacheMaxAgeMs: 0,
      cacheDefaultAgeMs: 60_000,
      cacheSize: 5,
      cacheMaxDocumentBytes: 1024,
      jwksRefetchIntervalMs: 120_000,
      githubUrl: "http://127.0.0.1:9999",
      githubApiUrl: "http://127.0.0.1:9999/api",
      azureAdUrl: "http://127.0.0.1:9998",
      appleUrl: "http://127.0.0.1:9997",
      intentTtlMs: 90_000,
      ldapMaxTimeoutMs: 2_500,
      samlClockSkewMs: 0,
    });
  });
});

describe("loadConfig errors", () => {
  it.each([
    ["PLATFORM_PORT=abc", { PLATFORM_PORT: "abc" }, /PLATFORM_PORT.*"abc"/],
    ["PLATFORM_PORT=70000", { PLATFORM_PORT: "70000" }, /PLATFORM_PORT/],
    ["PLATFORM_PORT=80.5", { PLATFORM_PORT: "80.5" }, /PLATFORM_PORT/],
    ["a 31-character PLATFORM_MASTERKEY", { PLATFORM_MASTERKEY: KEY.slice(1) }, /PLATFORM_MASTERKEY.*32/],
    ["a 33-character PLATFORM_MASTERKEY", { PLATFORM_MASTERKEY: KEY + "x" }, /PLATFORM_MASTERKEY.*32/],
    ["DATABASE_URL without PLATFORM_MASTERKEY", { DATABASE_URL: "postgres://db/x" }, /PLATFORM_MASTERKEY is required with DATABASE_URL/],
    ["PLATFORM_WORKERS=2 without DATABASE_URL", { PLATFORM_WORKERS: "2" }, /PLATFORM_WORKERS.*DATABASE_URL/],
    ["PLATFORM_WORKERS=0", { PLATFORM_WORKERS: "0" }, /PLATFORM_WORKERS/],
    ["LOG_LEVEL=verbose", { LOG_LEVEL: "verbose" }, /LOG_LEVEL.*"verbose"/],
    ["only PLATFORM_TLS_CERT_PATH", { PLATFORM_TLS_CERT_PATH: "/c.pem" }, /PLATFORM_TLS_CERT_PATH and PLATFORM_TLS_KEY_PATH/],
    ["only PLATFORM_TLS_KEY_PATH", { PLATFORM_TLS_KEY_PATH: "/k.pem" }, /PLATFORM_TLS_CERT_PATH and PLATFORM_TLS_KEY_PATH/],
    ["an unknown PLATFORM_FEATURES flag", { PLATFORM_FEATURES: "teleport=on" }, /PLATFORM_FEATURES.*"teleport=on"/],
    ["a PLATFORM_FEATURES value other than on/off", { PLATFORM_FEATURES: "actions=yes" }, /PLATFORM_FEATURES.*"actions=yes"/],
    ["a PLATFORM_FEATURES item without a value", { PLATFORM_FEATURES: "actions" }, /PLATFORM_FEATURES.*"actions"/],
    ["PLATFORM_EXTERNAL_URL=ftp://x", { PLATFORM_EXTERNAL_URL: "ftp://x" }, /PLATFORM_EXTERNAL_URL.*"ftp:\/\/x"/],
    ["PLATFORM_EXTERNAL_URL that is no URL", { PLATFORM_EXTERNAL_URL: "localhost:8080" }, /PLATFORM_EXTERNAL_URL/],
    ["PLATFORM_GITHUB_API_URL=ftp://x", { PLATFORM_GITHUB_API_URL: "ftp://x" }, /PLATFORM_GITHUB_API_URL.*"ftp:\/\/x"/],
    ["PLATFORM_APPLE_URL that is no URL", { PLATFORM_APPLE_URL: "appleid.apple.com" }, /PLATFORM_APPLE_URL/],
    ["PLATFORM_AZURE_AD_URL=ftp://x", { PLATFORM_AZURE_AD_URL: "ftp://x" }, /PLATFORM_AZURE_AD_URL.*"ftp:\/\/x"/],
    ["PLATFORM_IDP_CACHE_SIZE=0", { PLATFORM_IDP_CACHE_SIZE: "0" }, /PLATFORM_IDP_CACHE_SIZE/],
    ["PLATFORM_IDP_CACHE_MAX_AGE=48h", { PLATFORM_IDP_CACHE_MAX_AGE: "48h" }, /PLATFORM_IDP_CACHE_MAX_AGE/],
    ["PLATFORM_IDP_JWKS_REFETCH_INTERVAL=0s", { PLATFORM_IDP_JWKS_REFETCH_INTERVAL: "0s" }, /PLATFORM_IDP_JWKS_REFETCH_INTERVAL/],
    ["PLATFORM_LDAP_MAX_TIMEOUT=6m", { PLATFORM_LDAP_MAX_TIMEOUT: "6m" }, /PLATFORM_LDAP_MAX_TIMEOUT/],
    ["PLATFORM_SAML_CLOCK_SKEW=11m", { PLATFORM_SAML_CLOCK_SKEW: "11m" }, /PLATFORM_SAML_CLOCK_SKEW/],
  ])("rejects %s with a ConfigError naming the variable", (_, env, message) => {
    expect(configError(env).message).toMatch(message);
  });

  it("accepts PLATFORM_WORKERS=2 with PostgreSQL", () => {
    expect(loadConfig({ PLATFORM_WORKERS: "2", DATABASE_URL: "postgres://db/x", PLATFORM_MASTERKEY: KEY }).workers).toBe(2);
  });
});

describe("resolveMasterKey", () => {
  it("generates a 32-character key once into the data dir, mode 0600, and reuses it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "config-test-"));
    try {
      const config = loadConfig({ PLATFORM_DATA_DIR: join(dir, "nested") });
      const key = await resolveMasterKey(config);
      expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
      const path = join(dir, "nested", "masterkey");
      expect((await readFile(path, "utf8")).trim()).toBe(key);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(await resolveMasterKey(config)).toBe(key);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("prefers PLATFORM_MASTERKEY and rejects a damaged key file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "config-test-"));
    try {
      expect(await resolveMasterKey(loadConfig({ PLATFORM_DATA_DIR: dir, PLATFORM_MASTERKEY: KEY }))).toBe(KEY);
      await writeFile(join(dir, "masterkey"), "too short\n");
      await expect(resolveMasterKey(loadConfig({ PLATFORM_DATA_DIR: dir }))).rejects.toThrow(/masterkey.*32/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("limits and timeouts (README configuration table)", () => {
  it("have the documented defaults", () => {
    const config = loadConfig({});
    expect(config.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 65_000,
      maxConnections: 10_000,
      http2MaxStreams: 100,
      http2MaxSessionMemoryMb: 10,
      shutdownGraceMs: 10_000,
      shutdownTimeoutMs: 30_000,
    });
    expect(config.maxWatchStreams).toBe(1000);
    expect(config.db).toEqual({
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 30_000,
      idleInTransactionTimeoutMs: 60_000,
      poolMax: 20,
      preparedStatementsMax: 500,
      sharedConnections: 2,
      sharedQueueMax: 16,
      sharedSlowHeadMs: 10,
      conflictRetries: 3,
    });
    expect(config.healthTimeoutMs).toBe(2_000);
    expect(config.metricsBind).toEqual({ host: "127.0.0.1", port: 9090 });
    expect(config.bootstrapPatExpiresMs).toBe(8760 * 3_600_000);
    expect(config.passwords).toEqual({ memoryKiB: 19456, iterations: 2, parallelism: 1 });
    expect(config.signInLog).toEqual({ windowMs: 60_000, burst: 10, keys: 10_000, buffer: 10_000, flushIntervalMs: 250 });
  });

  it("read every variable", () => {
    const config = loadConfig({
      PLATFORM_HTTP_HEADERS_TIMEOUT_MS: "100",
      PLATFORM_HTTP_REQUEST_TIMEOUT_MS: "200",
      PLATFORM_HTTP_IDLE_TIMEOUT_MS: "300",
      PLATFORM_MAX_CONNECTIONS: "5",
      PLATFORM_HTTP2_MAX_STREAMS: "7",
      PLATFORM_HTTP2_MAX_SESSION_MEMORY_MB: "2",
      PLATFORM_SHUTDOWN_GRACE_MS: "0",
      PLATFORM_SHUTDOWN_TIMEOUT_MS: "1500",
      PLATFORM_MAX_WATCH_STREAMS: "3",
      PLATFORM_DB_CONNECT_TIMEOUT_MS: "400",
      PLATFORM_DB_STATEMENT_TIMEOUT_MS: "500",
      PLATFORM_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: "600",
      PLATFORM_DB_POOL_MAX: "4",
      PLATFORM_DB_PREPARED_STATEMENTS_MAX: "0",
      PLATFORM_DB_SHARED_CONNECTIONS: "0",
      PLATFORM_DB_SHARED_QUEUE_MAX: "3",
      PLATFORM_DB_SHARED_SLOW_HEAD_MS: "7",
      PLATFORM_DB_CONFLICT_RETRIES: "0",
      PLATFORM_HEALTH_TIMEOUT_MS: "250",
      PLATFORM_METRICS_BIND: "[::1]:9464",
      PLATFORM_BOOTSTRAP_PAT_EXPIRES: "90m",
      PLATFORM_PASSWORD_ARGON2_MEMORY_KIB: "65536",
      PLATFORM_PASSWORD_ARGON2_ITERATIONS: "3",
      PLATFORM_PASSWORD_ARGON2_PARALLELISM: "4",
      PLATFORM_AUDIT_SIGNIN_WINDOW: "5m",
      PLATFORM_AUDIT_SIGNIN_BURST: "0",
      PLATFORM_AUDIT_SIGNIN_KEYS: "50",
      PLATFORM_AUDIT_SIGNIN_BUFFER: "60",
      PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL: "10ms",
    });
    expect(config.http).toEqual({
      headersTimeoutMs: 100,
      requestTimeoutMs: 200,
      idleTimeoutMs: 300,
      maxConnections: 5,
      http2MaxStreams: 7,
      http2MaxSessionMemoryMb: 2,
      shutdownGraceMs: 0,
      shutdownTimeoutMs: 1_500,
    });
    // The whole shutdown must leave room after the grace.
    expect(configError({ PLATFORM_SHUTDOWN_GRACE_MS: "5000", PLATFORM_SHUTDOWN_TIMEOUT_MS: "5500" }).message).toContain("PLATFORM_SHUTDOWN_TIMEOUT_MS");
    expect(loadConfig({ PLATFORM_SHUTDOWN_GRACE_MS: "60000" }).http.shutdownTimeoutMs).toBe(80_000);
    expect(config.maxWatchStreams).toBe(3);
    expect(config.db).toEqual({
      connectTimeoutMs: 400,
      statementTimeoutMs: 500,
      idleInTransactionTimeoutMs: 600,
      poolMax: 4,
      preparedStatementsMax: 0,
      sharedConnections: 0,
      sharedQueueMax: 3,
      sharedSlowHeadMs: 7,
      conflictRetries: 0,
    });
    expect(config.healthTimeoutMs).toBe(250);
    expect(config.metricsBind).toEqual({ host: "::1", port: 9464 });
    expect(config.bootstrapPatExpiresMs).toBe(90 * 60_000);
    expect(config.passwords).toEqual({ memoryKiB: 65536, iterations: 3, parallelism: 4 });
    expect(config.signInLog).toEqual({ windowMs: 300_000, burst: 0, keys: 50, buffer: 60, flushIntervalMs: 10 });
  });

  it("turn metrics off with an empty PLATFORM_METRICS_BIND", () => {
    expect(loadConfig({ PLATFORM_METRICS_BIND: "" }).metricsBind).toBeUndefined();
  });

  it.each([
    ["PLATFORM_HTTP_HEADERS_TIMEOUT_MS", "0"],
    ["PLATFORM_MAX_CONNECTIONS", "-1"],
    ["PLATFORM_HTTP2_MAX_STREAMS", "1.5"],
    ["PLATFORM_DB_STATEMENT_TIMEOUT_MS", "soon"],
    ["PLATFORM_DB_POOL_MAX", "0"],
    ["PLATFORM_DB_PREPARED_STATEMENTS_MAX", "-1"],
    ["PLATFORM_DB_SHARED_CONNECTIONS", "-1"],
    ["PLATFORM_DB_SHARED_QUEUE_MAX", "0"],
    ["PLATFORM_DB_SHARED_SLOW_HEAD_MS", "-1"],
    ["PLATFORM_METRICS_BIND", "9090"],
    ["PLATFORM_METRICS_BIND", "localhost:99999"],
    ["PLATFORM_BOOTSTRAP_PAT_EXPIRES", "10"],
    ["PLATFORM_BOOTSTRAP_PAT_EXPIRES", "500ms"],
    ["PLATFORM_BOOTSTRAP_PAT_EXPIRES", "1d"],
    ["PLATFORM_BOOTSTRAP_PAT_EXPIRES", "87661h"],
    ["PLATFORM_PASSWORD_ARGON2_MEMORY_KIB", "1023"],
    ["PLATFORM_PASSWORD_ARGON2_ITERATIONS", "0"],
    ["PLATFORM_PASSWORD_ARGON2_PARALLELISM", "17"],
    ["PLATFORM_AUDIT_SIGNIN_WINDOW", "500ms"],
    ["PLATFORM_AUDIT_SIGNIN_BURST", "-1"],
    ["PLATFORM_AUDIT_SIGNIN_KEYS", "0"],
    ["PLATFORM_AUDIT_SIGNIN_BUFFER", "0"],
    ["PLATFORM_AUDIT_SIGNIN_FLUSH_INTERVAL", "2m"],
  ])("reject %s=%s with a message naming the variable", (name, value) => {
    expect(configError({ [name]: value }).message).toContain(name);
  });
});

describe("OpenID Connect and login settings", () => {
  it("defaults to the documented lifetimes, keys and limits", () => {
    const config = loadConfig({});
    expect(config.oidc).toEqual({
      accessTokenTtlS: 3600,
      idTokenTtlS: 3600,
      refreshTokenTtlS: 720 * 3600,
      signingAlg: "RS256",
      keyRotateEveryMs: 24 * 3_600_000,
      keyPublishAheadMs: 3_600_000,
      jwksMaxAgeS: 300,
      providerCacheSize: 100,
      sweepIntervalMs: 300_000,
    });
    expect(config.login).toEqual({ maxPasswordAttempts: 10, perIpPerMinute: 60, perLoginNamePerMinute: 20, perSessionPerMinute: 10, loginUiUrl: "" });
    expect(loadConfig({ PLATFORM_OIDC_LOGIN_UI_URL: "https://login.example/ui" }).login.loginUiUrl).toBe("https://login.example/ui");
    expect(() => loadConfig({ PLATFORM_OIDC_LOGIN_UI_URL: "login.example/ui" })).toThrow(
      /PLATFORM_OIDC_LOGIN_UI_URL: "login.example\/ui" is not an absolute https URL \(http only on localhost\)/,
    );
    expect(loadConfig({ PLATFORM_SESSION_RATE_PER_SESSION: "0" }).login.perSessionPerMinute).toBe(0);
  });

  it("reads every variable", () => {
    const config = loadConfig({
      PLATFORM_OIDC_ACCESS_TOKEN_TTL: "20s",
      PLATFORM_OIDC_SIGNING_ALG: "ES256",
      PLATFORM_OIDC_KEY_PUBLISH_AHEAD: "4s",
      PLATFORM_OIDC_JWKS_MAX_AGE: "1s",
      PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS: "0",
    });
    expect(config.oidc).toMatchObject({ accessTokenTtlS: 20, signingAlg: "ES256", keyPublishAheadMs: 4000, jwksMaxAgeS: 1 });
    expect(config.login.maxPasswordAttempts).toBe(0);
  });

  it("refuses what would break relying parties or is no value", () => {
    expect(configError({ PLATFORM_OIDC_SIGNING_ALG: "HS256" }).message).toContain("RS256 or ES256");
    expect(configError({ PLATFORM_OIDC_JWKS_MAX_AGE: "2h" }).message).toContain("shorter than PLATFORM_OIDC_KEY_PUBLISH_AHEAD");
    expect(configError({ PLATFORM_OIDC_KEY_PUBLISH_AHEAD: "30h" }).message).toContain("PLATFORM_OIDC_KEY_PUBLISH_AHEAD");
    expect(configError({ PLATFORM_OIDC_KEY_PUBLISH_AHEAD: "2h", PLATFORM_OIDC_KEY_ROTATE_EVERY: "2h" }).message).toContain(
      "shorter than PLATFORM_OIDC_KEY_ROTATE_EVERY",
    );
    expect(configError({ PLATFORM_OIDC_ACCESS_TOKEN_TTL: "soon" }).message).toContain("PLATFORM_OIDC_ACCESS_TOKEN_TTL");
    expect(configError({ PLATFORM_LOGIN_RATE_PER_IP: "-1" }).message).toContain("PLATFORM_LOGIN_RATE_PER_IP");
  });
});

describe("action settings", () => {
  it("keep a regenerated target key's predecessor signing for an hour by default, as told, at most 720h", () => {
    expect(loadConfig({}).actions).toEqual({
      signingKeyGraceMs: 3_600_000,
      delivery: { maxAgeMs: 86_400_000, pollIntervalMs: 1000, concurrency: 10, retentionMs: 720 * 3_600_000, sweepIntervalMs: 300_000 },
    });
    expect(
      loadConfig({
        PLATFORM_ACTIONS_DELIVERY_MAX_AGE: "2h",
        PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "100ms",
        PLATFORM_ACTIONS_DELIVERY_CONCURRENCY: "3",
        PLATFORM_ACTIONS_DELIVERY_RETENTION: "48h",
        PLATFORM_ACTIONS_DELIVERY_SWEEP_INTERVAL: "100ms",
      }).actions.delivery,
    ).toEqual({ maxAgeMs: 7_200_000, pollIntervalMs: 100, concurrency: 3, retentionMs: 172_800_000, sweepIntervalMs: 100 });
    expect(configError({ PLATFORM_ACTIONS_DELIVERY_RETENTION: "0s" }).message).toContain("PLATFORM_ACTIONS_DELIVERY_RETENTION");
    expect(configError({ PLATFORM_ACTIONS_DELIVERY_SWEEP_INTERVAL: "10ms" }).message).toContain("PLATFORM_ACTIONS_DELIVERY_SWEEP_INTERVAL");
    expect(configError({ PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "5ms" }).message).toContain("PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL");
    expect(configError({ PLATFORM_ACTIONS_DELIVERY_MAX_AGE: "721h" }).message).toContain("PLATFORM_ACTIONS_DELIVERY_MAX_AGE");
    expect(configError({ PLATFORM_ACTIONS_DELIVERY_CONCURRENCY: "0" }).message).toContain("PLATFORM_ACTIONS_DELIVERY_CONCURRENCY");
    expect(loadConfig({ PLATFORM_ACTIONS_SIGNING_KEY_GRACE: "90s" }).actions.signingKeyGraceMs).toBe(90_000);
    expect(configError({ PLATFORM_ACTIONS_SIGNING_KEY_GRACE: "721h" }).message).toContain("PLATFORM_ACTIONS_SIGNING_KEY_GRACE");
    expect(configError({ PLATFORM_ACTIONS_SIGNING_KEY_GRACE: "never" }).message).toContain("PLATFORM_ACTIONS_SIGNING_KEY_GRACE");
  });
});

describe("notification settings", () => {
  it("keep messages for an hour and codes an hour by email, ten minutes by SMS, by default; each variable changes its part", () => {
    expect(loadConfig({}).notifications).toEqual({
      maxAgeMs: 3_600_000,
      pollIntervalMs: 1000,
      concurrency: 10,
      retentionMs: 720 * 3_600_000,
      sweepIntervalMs: 300_000,
      codeTtlMs: { email: 3_600_000, sms: 600_000, invite: 72 * 3_600_000, otp: 300_000 },
      resetIntervalMs: 60_000,
      resetAnswerMs: 500,
    });
    expect(
      loadConfig({
        PLATFORM_NOTIFICATION_MAX_AGE: "2h",
        PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
        PLATFORM_NOTIFICATION_CONCURRENCY: "4",
        PLATFORM_NOTIFICATION_RETENTION: "48h",
        PLATFORM_NOTIFICATION_SWEEP_INTERVAL: "100ms",
        PLATFORM_CODE_TTL_EMAIL: "24h",
        PLATFORM_CODE_TTL_PHONE: "5m",
        PLATFORM_CODE_TTL_INVITE: "24h",
        PLATFORM_CODE_TTL_OTP: "1m",
        PLATFORM_PASSWORD_RESET_INTERVAL: "0s",
        PLATFORM_PASSWORD_RESET_ANSWER_TIME: "0ms",
      }).notifications,
    ).toEqual({
      maxAgeMs: 7_200_000,
      pollIntervalMs: 50,
      concurrency: 4,
      retentionMs: 172_800_000,
      sweepIntervalMs: 100,
      codeTtlMs: { email: 86_400_000, sms: 300_000, invite: 86_400_000, otp: 60_000 },
      resetIntervalMs: 0,
      resetAnswerMs: 0,
    });
    for (const [name, value] of [
      ["PLATFORM_NOTIFICATION_MAX_AGE", "721h"],
      ["PLATFORM_NOTIFICATION_POLL_INTERVAL", "5ms"],
      ["PLATFORM_NOTIFICATION_CONCURRENCY", "0"],
      ["PLATFORM_NOTIFICATION_RETENTION", "0s"],
      ["PLATFORM_NOTIFICATION_SWEEP_INTERVAL", "10ms"],
      ["PLATFORM_CODE_TTL_EMAIL", "later"],
      ["PLATFORM_CODE_TTL_PHONE", "25h"],
      ["PLATFORM_CODE_TTL_INVITE", "721h"],
      ["PLATFORM_PASSWORD_RESET_INTERVAL", "often"],
      ["PLATFORM_PASSWORD_RESET_ANSWER_TIME", "11s"],
    ] as const) {
      expect(configError({ [name]: value }).message).toContain(name);
    }
  });
});

describe("domain validation settings", () => {
  it("keep tokens 72h, ask the system's DNS servers within 5s and call ports 443 and 80 by default; each variable changes its part", () => {
    expect(loadConfig({}).domainValidation).toEqual({ tokenTtlMs: 72 * 3_600_000, dnsServers: undefined, dnsTimeoutMs: 5_000, httpsPort: 443, httpPort: 80 });
    expect(
      loadConfig({
        PLATFORM_DOMAIN_VALIDATION_TTL: "30m",
        PLATFORM_DNS_SERVERS: " 127.0.0.1:5353, 9.9.9.9 ,[::1]:53,2001:db8::1",
        PLATFORM_DNS_TIMEOUT: "250ms",
        PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT: "8443",
        PLATFORM_DOMAIN_VALIDATION_HTTP_PORT: "8080",
      }).domainValidation,
    ).toEqual({
      tokenTtlMs: 1_800_000,
      dnsServers: ["127.0.0.1:5353", "9.9.9.9:53", "[::1]:53", "[2001:db8::1]:53"],
      dnsTimeoutMs: 250,
      httpsPort: 8443,
      httpPort: 8080,
    });
    expect(loadConfig({ PLATFORM_DNS_SERVERS: " , " }).domainValidation.dnsServers).toBeUndefined();
    for (const [name, value] of [
      ["PLATFORM_DOMAIN_VALIDATION_TTL", "30s"],
      ["PLATFORM_DOMAIN_VALIDATION_TTL", "721h"],
      ["PLATFORM_DNS_SERVERS", "dns.example"],
      ["PLATFORM_DNS_SERVERS", "127.0.0.1:0"],
      ["PLATFORM_DNS_SERVERS", "127.0.0.1:70000"],
      ["PLATFORM_DNS_SERVERS", "::1:53:x"],
      ["PLATFORM_DNS_SERVERS", Array.from({ length: 17 }, (_, i) => `10.0.0.${i}`).join(",")],
      ["PLATFORM_DNS_TIMEOUT", "50ms"],
      ["PLATFORM_DNS_TIMEOUT", "2m"],
      ["PLATFORM_DOMAIN_VALIDATION_HTTPS_PORT", "0"],
      ["PLATFORM_DOMAIN_VALIDATION_HTTP_PORT", "65536"],
    ] as const) {
      expect(configError({ [name]: value }).message, `${name}=${value}`).toContain(name);
    }
  });

  it("allow branding images of 512 KiB by default; PLATFORM_BRANDING_MAX_IMAGE_BYTES from 1024 to 64 MiB", () => {
    expect(loadConfig({}).branding).toEqual({ maxImageBytes: 524_288 });
    expect(loadConfig({ PLATFORM_BRANDING_MAX_IMAGE_BYTES: "2048" }).branding).toEqual({ maxImageBytes: 2048 });
    for (const value of ["1023", "67108865", "1.5", "big"])
      expect(configError({ PLATFORM_BRANDING_MAX_IMAGE_BYTES: value }).message, value).toContain("PLATFORM_BRANDING_MAX_IMAGE_BYTES");
  });
});
