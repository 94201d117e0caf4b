import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { SecretBox } from "../../src/crypto/encryption.js";
import type { SealedContent } from "../../src/domain/notification/record.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient } from "../support/service-client.js";
import { until } from "../support/until.js";
import { LogCapture, startLoggedServer, type LoggedServer } from "../telemetry/support.js";
import { humanUser, uniqueName } from "../users/helpers.js";
import { twilioSettings } from "../notification-providers/requests.js";

/**
 * Codes are secrets: none may appear in a log line (of the requests, or of the worker's
 * failed sends), an event, the message log or an error, whatever happens to the message.
 */
describe.each(DATABASE_KINDS)("codes are never disclosed (%s)", (kind) => {
  const logs = new LogCapture();
  let server: LoggedServer;
  beforeAll(async () => {
    // An SMS provider that cannot be reached and no email provider: every message fails or waits, and is logged.
    server = await startLoggedServer(kind, logs, { PLATFORM_TWILIO_API_URL: "http://127.0.0.1:9", PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms" });
  });
  afterAll(() => server?.close());

  it("appear in no log line, event, message log entry or error", async () => {
    const users = serviceClient(PlatformUsers, server.baseUrl, server.adminToken);
    const sms = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
    await sms.ok("ActivateSMSProvider", {
      id: (await sms.ok("CreateSMSProvider", { provider: { description: "down", twilio: twilioSettings() } })).details.id,
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = (await users.ok("CreateUser", { user: humanUser(uniqueName("sec"), { password: "Corr3ct-horse!", phone: { number: `+4179000000${i}` } }) }))
        .details.id as string;
      ids.push(id);
      expect(await users.call("VerifyEmail", { id, verification: { code: "AAAAAAAA" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await users.call("VerifyPhone", { id, verification: { code: "AAAAAAAA" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    }
    const invited = (await users.ok("CreateUser", { user: humanUser(uniqueName("inv")) })).details.id as string;
    await users.ok("ResetPassword", { id: ids[0]! });
    // Every message tried at least once (SMS refused at the internal address, email waiting for a provider).
    const log = serviceClient(PlatformNotifications, server.baseUrl, server.adminToken);
    const messages = await until("every message tried", async () => {
      const found = ((await log.ok("SearchNotifications", {})).result ?? []) as { lastError?: string }[];
      return found.length >= 8 && found.every((m) => m.lastError) && found;
    });

    // The codes, as only the service can read them: out of the sealed messages.
    const box = new SecretBox("0123456789abcdef0123456789abcdef");
    const sealed = await server.service.store.db
      .selectFrom("notifications")
      .select("sealed_data")
      .where("user_id", "in", [...ids, invited])
      .execute();
    const codes = sealed.flatMap((r) => (r.sealed_data ? [(JSON.parse(box.decrypt(r.sealed_data)) as SealedContent).code!] : []));
    expect(codes.length).toBeGreaterThanOrEqual(8);

    const logged = logs.lines.map((l) => JSON.stringify(l)).join("\n");
    expect(
      logs.lines.some((l) => l.msg === "message not sent"),
      "the failed sends were logged",
    ).toBe(true);
    const events = (
      await server.service.store.db
        .selectFrom("events")
        .select(sql<string>`payload::text`.as("payload"))
        .execute()
    )
      .map((e) => e.payload)
      .join("\n");
    for (const code of codes) {
      expect(logged, "log lines").not.toContain(code);
      expect(events, "events").not.toContain(code);
      expect(JSON.stringify(messages), "the message log").not.toContain(code);
    }
  });
});
