import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable, PROTOCOL_TOKEN } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { readmeVerify } from "../support/readme-verify.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { until } from "../support/until.js";
import { humanUser, uniqueName } from "../users/helpers.js";
import { TwilioFake } from "./fakes.js";
import { ACCOUNT_SID, SERVICE_SID, TOKEN, twilioSettings } from "./requests.js";

describe.each(DATABASE_KINDS)("PlatformSMSProviders with a Twilio fake, and http providers of both families (%s)", (kind) => {
  const twilio = new TwilioFake();
  const receiver = new Receiver();
  let origin: string;
  let server: TestServer;

  beforeAll(async () => {
    const twilioUrl = await twilio.start();
    origin = await receiver.start();
    server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_TWILIO_API_URL: twilioUrl });
  });
  afterAll(async () => {
    await server?.close();
    twilio.close();
    receiver.close();
  });

  async function scenario(protocol: Protocol) {
    const client = protocolClient(PlatformSMSProviders, protocol, server.baseUrl);
    const call = (method: string, req: JsonObject) => client.call(method, req, server.adminToken);
    const description = `sms-${PROTOCOL_TOKEN[protocol]}`;
    const created = await call("CreateSMSProvider", { provider: { description, twilio: twilioSettings() } });
    const id = okMessage(created).details.id as string;
    const results: Record<string, CallResult> = {
      created,
      get: await call("GetSMSProvider", { id }),
      search: await call("SearchSMSProviders", {
        filters: [{ description: { description, method: "TEXT_FILTER_METHOD_EQUALS" } }, { state: { state: "EFFECTIVE_STATE_INACTIVE" } }],
      }),
      tested: await call("TestSMSProvider", { id, test: { receiver: "+41791234567" } }),
      patched: await call("PatchSMSProvider", { id, provider: { twilio: { messagingServiceSid: SERVICE_SID } } }),
      afterPatch: await call("GetSMSProvider", { id }),
      testedByService: await call("TestSMSProvider", { id, test: { receiver: "+41791234568" } }),
      activated: await call("ActivateSMSProvider", { id }),
      deactivated: await call("DeactivateSMSProvider", { id }),
      deleted: await call("DeleteSMSProvider", { id }),
      getDeleted: await call("GetSMSProvider", { id }),
      noSender: await call("CreateSMSProvider", { provider: { description, twilio: { accountSid: ACCOUNT_SID, token: TOKEN } } }),
      badSid: await call("CreateSMSProvider", { provider: { description, twilio: twilioSettings({ accountSid: "AC123", senderNumber: "+15005550006" }) } }),
      badReceiver: await call("TestSMSProvider", { id, test: { receiver: "0791234567" } }),
    };
    return { results, id };
  }

  it("serves every RPC alike over every protocol; _test posts Twilio's form with Basic credentials", async () => {
    const runs = new Map<Protocol, { results: Record<string, CallResult>; id: string }>();
    for (const protocol of PROTOCOLS) runs.set(protocol, await scenario(protocol));
    const grpc = runs.get("grpc")!.results;
    expect(okMessage(grpc.get!).provider).toEqual({
      details: expect.objectContaining({ sequence: "1" }),
      state: "EFFECTIVE_STATE_INACTIVE",
      description: "sms-ga",
      twilio: { accountSid: ACCOUNT_SID, tokenSet: true, senderNumber: "+15005550006" },
    });
    expect(okMessage(grpc.search!).result).toHaveLength(1);
    expect(okMessage(grpc.afterPatch!).provider.twilio).toEqual({ accountSid: ACCOUNT_SID, tokenSet: true, messagingServiceSid: SERVICE_SID });
    expect(grpc.getDeleted).toMatchObject({ ok: false, code: Code.NotFound });
    for (const step of ["noSender", "badSid", "badReceiver"]) expect(grpc[step], step).toMatchObject({ ok: false, code: Code.InvalidArgument });
    const reference = Object.fromEntries(
      Object.entries(grpc).map(([step, r]) => [step, comparable(r, { provider: runs.get("grpc")!.id }, { prefix: "sms-" })]),
    );
    for (const [protocol, { results, id }] of runs) {
      for (const [step, r] of Object.entries(results))
        expect(comparable(r, { provider: id }, { prefix: "sms-" }), `${protocol} ${step}`).toEqual(reference[step]);
    }

    expect(twilio.calls).toHaveLength(2 * PROTOCOLS.length);
    for (const [i, call] of twilio.calls.entries()) {
      expect(call.path).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
      expect(call.contentType).toBe("application/x-www-form-urlencoded");
      expect(call.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${TOKEN}`).toString("base64")}`);
      const byNumber = i % 2 === 0;
      expect(Object.fromEntries(call.form)).toEqual({
        To: byNumber ? "+41791234567" : "+41791234568",
        Body: "Test message: the SMS provider delivers.",
        ...(byNumber ? { From: "+15005550006" } : { MessagingServiceSid: SERVICE_SID }),
      });
    }
  });

  it("answers Twilio's refusal in its words as FailedPrecondition", async () => {
    const sms = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
    const id = (await sms.ok("CreateSMSProvider", { provider: { description: "refused", twilio: twilioSettings() } })).details.id;
    twilio.answer = () => ({
      status: 400,
      body: {
        code: 21211,
        message: "The 'To' number +41791234567 is not a valid phone number.",
        more_info: "https://www.twilio.com/docs/errors/21211",
        status: 400,
      },
    });
    try {
      for (const protocol of PROTOCOLS) {
        const refused = await protocolClient(PlatformSMSProviders, protocol, server.baseUrl).call(
          "TestSMSProvider",
          { id, test: { receiver: "+41791234567" } },
          server.adminToken,
        );
        expect(refused, protocol).toMatchObject({
          ok: false,
          code: Code.FailedPrecondition,
          message: "Twilio answered HTTP 400: The 'To' number +41791234567 is not a valid phone number. (error 21211)",
        });
      }
    } finally {
      twilio.answer = undefined;
    }
  });

  it("signs what http providers of both families receive, with the key their create answered once, as the README's check verifies", async () => {
    const verify = readmeVerify();
    for (const [service, family] of [
      [PlatformSMTPProviders, "SMTP"],
      [PlatformSMSProviders, "SMS"],
    ] as const) {
      for (const protocol of PROTOCOLS) {
        const client = protocolClient(service, protocol, server.baseUrl);
        const call = (method: string, req: JsonObject) => client.call(method, req, server.adminToken);
        const path = `/${family}-${protocol}`;
        const made = okMessage(await call(`Create${family}Provider`, { provider: { description: path, http: { url: `${origin}${path}` } } }));
        const id = made.details.id as string;
        expect(made.signingKey).toMatch(/^[A-Za-z0-9]{36}$/);
        const read = okMessage(await call(`Get${family}Provider`, { id }));
        expect(read.provider.http).toEqual({ url: `${origin}${path}` });
        expect(JSON.stringify(read)).not.toContain(made.signingKey);
        const to = family === "SMTP" ? "hook@mail.example" : "+41790000000";
        okMessage(await call(`Test${family}Provider`, { id, test: { receiver: to } }));
        const [received] = receiver.callsTo(path);
        expect(received, `${family} ${protocol}`).toBeDefined();
        expect(verify(String(received!.headers["platform-signature"]), received!.raw, made.signingKey)).toBe(true);
        expect(received!.body).toMatchObject({ instanceId: server.instanceId, channel: family === "SMTP" ? "email" : "sms", to });
        if (family === "SMTP") expect(received!.body).toMatchObject({ subject: "Test email", text: expect.any(String), html: expect.stringContaining("<p>") });

        const regenerated = okMessage(await call(`Patch${family}Provider`, { id, provider: { regenerateSigningKey: true } }));
        expect(regenerated.signingKey).toMatch(/^[A-Za-z0-9]{36}$/);
        receiver.answers.set(path, () => ({ status: 503, raw: "down for maintenance" }));
        const failed = await call(`Test${family}Provider`, { id, test: { receiver: to } });
        expect(failed).toMatchObject({ ok: false, code: Code.FailedPrecondition, message: "the provider's endpoint answered HTTP 503: down for maintenance" });
        const again = receiver.callsTo(path)[1]!;
        expect(verify(String(again.headers["platform-signature"]), again.raw, regenerated.signingKey)).toBe(true);
        expect(verify(String(again.headers["platform-signature"]), again.raw, made.signingKey), "the old key signs no more").toBe(false);
      }
    }
  });

  it.each(["grpc", "rest"] as const)(
    "keeps a Twilio token for its account and a signing key for its URL: a patch changing either must carry them anew (%s)",
    async (protocol) => {
      const refusedAs = (r: CallResult, field: string, renewedBy: string) => {
        expect(r).toMatchObject({
          ok: false,
          code: Code.InvalidArgument,
          message: expect.stringMatching(new RegExp(`^changing ${field} needs ${renewedBy} `)),
        });
        if (protocol === "rest") expect(r.httpStatus).toBe(400);
      };
      const sms = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken, protocol);
      const id = (await sms.ok("CreateSMSProvider", { provider: { description: "aimed", twilio: twilioSettings() } })).details.id;
      const before = await sms.ok("GetSMSProvider", { id });
      const otherSid = `AC${"a".repeat(32)}`;
      refusedAs(await sms.call("PatchSMSProvider", { id, provider: { twilio: { accountSid: otherSid } } }), "accountSid", "token");
      expect(await sms.ok("GetSMSProvider", { id }), "nothing stored changed").toEqual(before);
      const basic = (sid: string, token: string) => `Basic ${Buffer.from(`${sid}:${token}`).toString("base64")}`;
      const testedWith = async () => {
        const calls = twilio.calls.length;
        await sms.ok("TestSMSProvider", { id, test: { receiver: "+41791234569" } });
        return twilio.calls[calls]!.authorization;
      };
      await sms.ok("PatchSMSProvider", { id, provider: { twilio: { accountSid: ACCOUNT_SID, messagingServiceSid: SERVICE_SID } } });
      expect(await testedWith(), "another sender keeps the token").toBe(basic(ACCOUNT_SID, TOKEN));
      await sms.ok("PatchSMSProvider", { id, provider: { twilio: { accountSid: otherSid, token: "Other-Token-7z" } } });
      expect(await testedWith(), "with the token the account changes").toBe(basic(otherSid, "Other-Token-7z"));

      const verify = readmeVerify();
      for (const [service, family, to] of [
        [PlatformSMTPProviders, "SMTP", "hook@mail.example"],
        [PlatformSMSProviders, "SMS", "+41790000000"],
      ] as const) {
        const api = serviceClient(service, server.baseUrl, server.adminToken, protocol);
        const path = `/aimed-${family}-${protocol}`;
        const made = await api.ok(`Create${family}Provider`, { provider: { description: "hook", http: { url: `${origin}${path}` } } });
        const hook = await api.ok(`Get${family}Provider`, { id: made.details.id });
        refusedAs(
          await api.call(`Patch${family}Provider`, { id: made.details.id, provider: { http: { url: `${origin}${path}-elsewhere` } } }),
          "url",
          "regenerateSigningKey",
        );
        expect(await api.ok(`Get${family}Provider`, { id: made.details.id }), "nothing stored changed").toEqual(hook);
        await api.ok(`Patch${family}Provider`, { id: made.details.id, provider: { description: "renamed hook", http: { url: `${origin}${path}` } } });
        await api.ok(`Test${family}Provider`, { id: made.details.id, test: { receiver: to } });
        const kept = receiver.callsTo(path)[0]!;
        expect(verify(String(kept.headers["platform-signature"]), kept.raw, made.signingKey), `${family}: the key is kept`).toBe(true);
        const moved = await api.ok(`Patch${family}Provider`, {
          id: made.details.id,
          provider: { http: { url: `${origin}${path}-elsewhere` }, regenerateSigningKey: true },
        });
        await api.ok(`Test${family}Provider`, { id: made.details.id, test: { receiver: to } });
        const there = receiver.callsTo(`${path}-elsewhere`)[0]!;
        expect(verify(String(there.headers["platform-signature"]), there.raw, moved.signingKey), `${family}: the new URL gets the new key`).toBe(true);
        expect(verify(String(there.headers["platform-signature"]), there.raw, made.signingKey), `${family}: never the old one`).toBe(false);
      }
    },
  );

  it("sends the outbox's messages through an active http provider, signed as the README's check verifies", async () => {
    const verify = readmeVerify();
    const smtp = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const made = await smtp.ok("CreateSMTPProvider", { provider: { description: "outbox hook", http: { url: `${origin}/outbox` } } });
    await smtp.ok("ActivateSMTPProvider", { id: made.details.id });
    try {
      const name = uniqueName("hook");
      await serviceClient(PlatformUsers, server.baseUrl, server.adminToken).ok("CreateUser", { user: humanUser(name) });
      const call = await until("the message's POST", () => receiver.callsTo("/outbox").find((c) => c.body.to === `${name}@mail.example`));
      expect(verify(String(call.headers["platform-signature"]), call.raw, made.signingKey)).toBe(true);
      expect(verify(String(call.headers["platform-signature"]), call.raw, `${made.signingKey}x`)).toBe(false);
      expect(call.body).toMatchObject({
        instanceId: server.instanceId,
        channel: "email",
        to: `${name}@mail.example`,
        subject: expect.stringMatching(/\S/),
        text: expect.stringMatching(/\S/),
        html: expect.stringContaining("<"),
      });
      expect(receiver.callsTo("/outbox")).toHaveLength(1);
    } finally {
      await smtp.ok("DeleteSMTPProvider", { id: made.details.id });
    }
  });
});
