import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { twilioSettings } from "./requests.js";

const HTTP = { http: { url: "https://mailer.example/send" } };

describe.each(DATABASE_KINDS)("one active provider per family and instance (%s)", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  const smtp = () => serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
  const sms = () => serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
  const create = async (description: string) => (await smtp().ok("CreateSMTPProvider", { provider: { description, ...HTTP } })).details.id as string;
  const active = async () =>
    ((await smtp().ok("SearchSMTPProviders", { filters: [{ state: { state: "EFFECTIVE_STATE_ACTIVE" } }] })).result ?? []).map(
      (p: { details: { id: string } }) => p.details.id,
    );
  const stateOf = async (id: string) => (await smtp().ok("GetSMTPProvider", { id })).provider.state;

  it("activating one deactivates the previous in the same change; the other family is untouched", async () => {
    const a = await create("a");
    const b = await create("b");
    const text = (await sms().ok("CreateSMSProvider", { provider: { description: "text", twilio: twilioSettings() } })).details.id;
    await smtp().ok("ActivateSMTPProvider", { id: a });
    await sms().ok("ActivateSMSProvider", { id: text });
    expect(await active()).toEqual([a]);
    const activated = await smtp().ok("ActivateSMTPProvider", { id: b });
    expect(await active()).toEqual([b]);
    expect(await stateOf(a)).toBe("EFFECTIVE_STATE_INACTIVE");
    expect((await sms().ok("GetSMSProvider", { id: text })).provider.state).toBe("EFFECTIVE_STATE_ACTIVE");
    // An SMTP provider's id names nothing among the SMS providers.
    expect(await sms().call("ActivateSMSProvider", { id: a })).toMatchObject({ ok: false, code: 5 });

    const events = await server.service.store.db
      .selectFrom("events")
      .select(["aggregate_id", "event_type", sql<string>`payload::text`.as("payload"), "created_at"])
      .where("aggregate_type", "=", "smtp_provider")
      .where("event_type", "in", ["smtp_provider.activated", "smtp_provider.deactivated"])
      .orderBy("position")
      .execute();
    expect(events.map((e) => [e.aggregate_id, e.event_type, JSON.parse(e.payload)])).toEqual([
      [a, "smtp_provider.activated", {}],
      [a, "smtp_provider.deactivated", { replacedBy: b }],
      [b, "smtp_provider.activated", {}],
    ]);
    expect(activated.details.changeDate).toBe(events[2]!.created_at.toISOString());

    await smtp().ok("DeleteSMTPProvider", { id: b });
    expect(await active()).toEqual([]);
    await smtp().ok("DeleteSMTPProvider", { id: a });
  });

  it("activations racing over every protocol leave exactly one active provider", async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => create(`race-${i}`)));
    await Promise.all(
      ids.map((id, i) =>
        serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken, PROTOCOLS[i % PROTOCOLS.length]).ok("ActivateSMTPProvider", { id }),
      ),
    );
    const winners = await active();
    expect(winners).toHaveLength(1);
    const counts = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", (eb) => eb.fn.countAll<string>().as("n")])
      .where("aggregate_id", "in", ids)
      .where("event_type", "in", ["smtp_provider.activated", "smtp_provider.deactivated"])
      .groupBy("event_type")
      .execute();
    // Each activation after the first replaced the one before it.
    expect(Object.fromEntries(counts.map((c) => [c.event_type, Number(c.n)]))).toEqual({ "smtp_provider.activated": 10, "smtp_provider.deactivated": 9 });
    for (const id of ids) await smtp().ok("DeleteSMTPProvider", { id });
  });

  it("the database itself refuses a second active provider of a family", async () => {
    const [a, b] = [await create("x"), await create("y")];
    await smtp().ok("ActivateSMTPProvider", { id: a });
    const sneak = server.service.store.db.updateTable("notification_providers").set({ state: "active" }).where("id", "=", b).execute();
    await expect(sneak).rejects.toThrow(/notification_providers_active/);
    expect(await active()).toEqual([a]);
  });
});
