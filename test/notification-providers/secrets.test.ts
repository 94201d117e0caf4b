import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { SecretBox } from "../../src/crypto/encryption.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { LogCapture, startLoggedServer, type LoggedServer } from "../telemetry/support.js";
import { expectNothingSecret } from "../users/helpers.js";
import { smtpSettings, twilioSettings } from "./requests.js";

const MASTER_KEY = "0123456789abcdef0123456789abcdef";

describe.each(DATABASE_KINDS)("provider secrets are never disclosed (%s)", (kind) => {
  const logs = new LogCapture();
  let server: LoggedServer;
  const answers: CallResult[] = [];
  /** Signing keys are shown once, in the answer that made them: kept apart from the others. */
  const signingKeys: string[] = [];

  beforeAll(async () => {
    // Twilio at an internal address: the outbound policy refuses it before any connection.
    server = await startLoggedServer(kind, logs, { PLATFORM_TWILIO_API_URL: "http://127.0.0.1:9" });
  });
  afterAll(() => server?.close());

  const call = async (service: typeof PlatformSMTPProviders | typeof PlatformSMSProviders, protocol: Protocol, method: string, req: JsonObject) => {
    const r = await protocolClient(service, protocol, server.baseUrl).call(method, req, server.adminToken);
    if (r.ok && typeof r.message.signingKey === "string") signingKeys.push(r.message.signingKey);
    else answers.push(r);
    return r;
  };

  it("appear in no answer, event, log line or stored row in the clear", async () => {
    const secrets: string[] = [];
    for (const protocol of PROTOCOLS) {
      const secret = (name: string) => `${name}-${protocol}-secret-Zq9x`;
      const [password, newPassword, token, newToken] = [secret("Pw1"), secret("Pw2"), secret("Tk1"), secret("Tk2")];
      secrets.push(password, newPassword, token, newToken);
      const mail = okMessage(
        await call(PlatformSMTPProviders, protocol, "CreateSMTPProvider", { provider: { description: "secret", smtp: smtpSettings(2525, { password }) } }),
      );
      await call(PlatformSMTPProviders, protocol, "PatchSMTPProvider", { id: mail.details.id, provider: { smtp: { password: newPassword } } });
      await call(PlatformSMTPProviders, protocol, "GetSMTPProvider", { id: mail.details.id });
      // Refused (an internal address); the answer does not repeat the password.
      await call(PlatformSMTPProviders, protocol, "TestSMTPProvider", { id: mail.details.id, test: { receiver: "a@mail.example" } });
      expect(
        await call(PlatformSMTPProviders, protocol, "CreateSMTPProvider", {
          provider: { description: "x", smtp: smtpSettings(25, { password, senderAddress: "" }) },
        }),
      ).toMatchObject({ ok: false, code: Code.InvalidArgument });

      const text = okMessage(
        await call(PlatformSMSProviders, protocol, "CreateSMSProvider", {
          provider: { description: "secret", twilio: twilioSettings({ token, senderNumber: "+15005550006" }) },
        }),
      );
      await call(PlatformSMSProviders, protocol, "PatchSMSProvider", { id: text.details.id, provider: { twilio: { token: newToken } } });
      await call(PlatformSMSProviders, protocol, "GetSMSProvider", { id: text.details.id });
      await call(PlatformSMSProviders, protocol, "TestSMSProvider", { id: text.details.id, test: { receiver: "+41790000000" } });

      const hook = await call(PlatformSMSProviders, protocol, "CreateSMSProvider", {
        provider: { description: "hook", http: { url: "https://hooks.example/sms" } },
      });
      await call(PlatformSMSProviders, protocol, "PatchSMSProvider", { id: okMessage(hook).details.id, provider: { regenerateSigningKey: true } });
      await call(PlatformSMSProviders, protocol, "SearchSMSProviders", {});
      await call(PlatformSMTPProviders, protocol, "SearchSMTPProviders", {});
    }
    expect(signingKeys).toHaveLength(2 * PROTOCOLS.length);
    const all = [...secrets, ...signingKeys];
    expectNothingSecret(answers, all);
    expect(JSON.stringify(answers)).toMatch(/passwordSet/);

    const db = server.service.store.db;
    const events = await db
      .selectFrom("events")
      .select(sql<string>`payload::text`.as("payload"))
      .where("aggregate_type", "in", ["smtp_provider", "sms_provider"])
      .execute();
    expect(events.length).toBeGreaterThanOrEqual(6 * PROTOCOLS.length);
    const payloads = events.map((e) => e.payload).join("\n");
    for (const s of all) expect(payloads, "event payloads").not.toContain(s);
    expect(payloads).toMatch(/"secretChanged": ?true/);

    const logged = logs.lines.map((l) => JSON.stringify(l)).join("\n");
    expect(
      logs.lines.some((l) => (l.msg === "rpc" || l.msg === "rpc failed") && l.code === "failed_precondition"),
      "the failed tests were logged",
    ).toBe(true);
    for (const s of all) expect(logged, "log lines").not.toContain(s);

    const rows = await db.selectFrom("notification_providers").selectAll().execute();
    const dump = JSON.stringify(rows);
    for (const s of all) expect(dump, "stored rows").not.toContain(s);
    // What is stored opens to the newest secret of each provider.
    const box = new SecretBox(MASTER_KEY);
    const opened = rows
      .flatMap((r) => [r.secret, r.signing_key])
      .filter((v): v is string => v !== null)
      .map((v) => box.decrypt(v));
    for (const s of secrets.filter((_, i) => i % 2 === 1)) expect(opened).toContain(s);
  });
});
