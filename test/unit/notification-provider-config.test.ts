import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";

const providers = (env: Record<string, string>) => loadConfig(env).notificationProviders;

describe("notification provider settings", () => {
  it("have safe defaults: no system provider, Twilio's API, bounded sends and pools", () => {
    expect(providers({})).toEqual({
      systemSmtp: undefined,
      smtpCaPath: undefined,
      smtpTimeoutMs: 30_000,
      smtpPoolSize: 100,
      smtpMaxConnections: 3,
      twilioApiUrl: "https://api.twilio.com",
    });
  });

  it("read the system SMTP provider from PLATFORM_SMTP_URL and PLATFORM_SMTP_FROM", () => {
    const from = { PLATFORM_SMTP_FROM: '"Acme Login" <login@acme.example>' };
    expect(providers({ PLATFORM_SMTP_URL: "smtp://mailer:p%40ss%20word@relay.acme.example:587", ...from }).systemSmtp).toEqual({
      host: "relay.acme.example",
      port: 587,
      tls: "starttls",
      user: "mailer",
      password: "p@ss word",
      senderAddress: "login@acme.example",
      senderName: "Acme Login",
    });
    expect(providers({ PLATFORM_SMTP_URL: "smtps://relay.acme.example", PLATFORM_SMTP_FROM: "login@acme.example" }).systemSmtp).toEqual({
      host: "relay.acme.example",
      port: 465,
      tls: "implicit",
      user: "",
      password: "",
      senderAddress: "login@acme.example",
      senderName: "",
    });
    expect(providers({ PLATFORM_SMTP_URL: "smtp://localhost:1025?tls=none", ...from }).systemSmtp).toMatchObject({
      host: "localhost",
      port: 1025,
      tls: "none",
    });
    expect(providers({ PLATFORM_SMTP_URL: "smtp://[::1]:25", ...from }).systemSmtp).toMatchObject({ host: "::1", port: 25 });
  });

  it("refuse what they cannot use, without echoing the URL's password", () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ PLATFORM_SMTP_URL: "http://user:Secret-9@relay.example", PLATFORM_SMTP_FROM: "a@b.example" }, /PLATFORM_SMTP_URL must be smtp:/],
      [{ PLATFORM_SMTP_URL: "smtps://user:Secret-9@relay.example?tls=none", PLATFORM_SMTP_FROM: "a@b.example" }, /PLATFORM_SMTP_URL/],
      [{ PLATFORM_SMTP_URL: "not a url Secret-9" }, /PLATFORM_SMTP_URL must be a URL/],
      [{ PLATFORM_SMTP_URL: "smtp://user:Secret-9@relay.example" }, /PLATFORM_SMTP_FROM is required/],
      [{ PLATFORM_SMTP_URL: "smtp://relay.example", PLATFORM_SMTP_FROM: "nobody" }, /PLATFORM_SMTP_FROM must be an address/],
      [{ PLATFORM_SMTP_FROM: "a@b.example" }, /PLATFORM_SMTP_FROM needs PLATFORM_SMTP_URL/],
      [{ PLATFORM_SMTP_TIMEOUT: "0s" }, /PLATFORM_SMTP_TIMEOUT/],
      [{ PLATFORM_SMTP_POOL_SIZE: "0" }, /PLATFORM_SMTP_POOL_SIZE/],
      [{ PLATFORM_SMTP_MAX_CONNECTIONS: "1000" }, /PLATFORM_SMTP_MAX_CONNECTIONS/],
      [{ PLATFORM_TWILIO_API_URL: "ftp://twilio.example" }, /PLATFORM_TWILIO_API_URL/],
    ];
    for (const [env, message] of bad) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("Secret-9");
    }
  });
});
