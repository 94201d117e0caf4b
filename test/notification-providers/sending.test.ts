import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { NoActiveProvider, SendFailed, type EmailMessage } from "../../src/engines/notifications/message.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { testCertificates, TestSmtpServer, TwilioFake, type Certificates } from "./fakes.js";
import { PASSWORD, smtpSettings, twilioSettings } from "./requests.js";

const email = (to: string, subject = "Your code"): EmailMessage => ({ to, subject, text: "Code: 123456", html: "<p>Code: <b>123456</b></p>" });

/** What a send threw: NoActiveProvider, or SendFailed with its retryability and words. */
async function failure(send: Promise<void>) {
  const error = await send.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof NoActiveProvider) return { noProvider: error.channel };
  if (error instanceof SendFailed) return { retryable: error.retryable, message: error.message };
  throw new Error(`expected a failure, got ${String(error)}`);
}

let dir: string;
let certificates: Certificates;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "smtp-sending-"));
  certificates = await testCertificates(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(DATABASE_KINDS)("the system default provider of PLATFORM_SMTP_URL, and the address policy (%s)", (kind) => {
  let smtp: TestSmtpServer;
  let server: TestServer;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55 w@rd" } });
    const port = await smtp.start();
    // No PLATFORM_OUTBOUND_ALLOW_PRIVATE: the operator's own relay is trusted, the API's destinations are not.
    server = await startTestServer(kind, {
      PLATFORM_SMTP_URL: `smtp://system:${encodeURIComponent("System-Pa55 w@rd")}@localhost:${port}`,
      PLATFORM_SMTP_FROM: "Platform System <system@platform.example>",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("sends an instance's emails while it has no active provider, in every instance; SMS has no default", async () => {
    const sender = server.service.app.notifications;
    await sender.sendEmail(server.instanceId, email("first@mail.example"));
    const other = await server.createInstance("other.localhost");
    await sender.sendEmail(other.instanceId, email("second@mail.example"));
    const [first, second] = [await smtp.nth(1), await smtp.nth(2)];
    expect(first).toMatchObject({ from: "system@platform.example", to: ["first@mail.example"], user: "system", secure: true });
    expect(second).toMatchObject({ to: ["second@mail.example"], user: "system" });
    expect(first.mail.from?.value).toEqual([{ address: "system@platform.example", name: "Platform System" }]);
    expect(first.mail.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
    expect([first.mail.subject, first.mail.text?.trim(), first.mail.html]).toEqual(["Your code", "Code: 123456", "<p>Code: <b>123456</b></p>"]);
    expect(await failure(sender.sendSms(server.instanceId, { to: "+41790000000", text: "hi" }))).toEqual({ noProvider: "sms" });
  });

  it("refuses internal destinations configured through the API: SMTP hosts by name or address, http URLs", async () => {
    const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const cases: { kind: JsonObject; words: RegExp }[] = [
      {
        kind: { smtp: smtpSettings(25, { host: "localhost" }) },
        words: /^localhost resolves to the internal address 127\.0\.0\.1, which providers may not reach$/,
      },
      { kind: { smtp: smtpSettings(25, { host: "10.1.2.3" }) }, words: /^10\.1\.2\.3 is an internal address, which providers may not reach$/ },
      { kind: { smtp: smtpSettings(25, { host: "169.254.169.254" }) }, words: /internal address/ },
      { kind: { http: { url: "http://127.0.0.1:9/send" } }, words: /could not be called \(refused\)/ },
    ];
    for (const { kind, words } of cases) {
      const id = (await admin.ok("CreateSMTPProvider", { provider: { description: "internal", ...kind } })).details.id;
      const tested = await admin.call("TestSMTPProvider", { id, test: { receiver: "x@mail.example" } });
      expect(tested, JSON.stringify(kind)).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((tested as { message: string }).message).toMatch(words);
      // Activated, it is used instead of the default, and refused for good.
      await admin.ok("ActivateSMTPProvider", { id });
      const sent = await failure(server.service.app.notifications.sendEmail(server.instanceId, email("x@mail.example")));
      expect(sent).toMatchObject({ retryable: false, message: expect.stringMatching(words) });
      await admin.ok("DeleteSMTPProvider", { id });
    }
    const before = smtp.delivered.length;
    await server.service.app.notifications.sendEmail(server.instanceId, email("after@mail.example"));
    expect((await smtp.nth(before + 1)).to).toEqual(["after@mail.example"]);
  });
});

describe.each(DATABASE_KINDS)("sending through an instance's active provider (%s)", (kind) => {
  let smtp: TestSmtpServer;
  let port: number;
  const twilio = new TwilioFake();
  let silent: Server;
  const silentSockets = new Set<Socket>();
  let silentPort: number;
  let server: TestServer;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    port = await smtp.start();
    // Accepts connections and never says a word.
    silent = createServer((socket) => silentSockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silentPort = (silent.address() as AddressInfo).port;
    server = await startTestServer(kind, {
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_SMTP_TIMEOUT: "1s",
      PLATFORM_TWILIO_API_URL: await twilio.start(),
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    twilio.close();
    for (const socket of silentSockets) socket.destroy();
    silent.close();
  });

  const smtpApi = () => serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
  const sender = () => server.service.app.notifications;

  it("waits with NoActiveProvider until a provider is active, then sends over pooled connections renewed on every change", async () => {
    expect(await failure(sender().sendEmail(server.instanceId, email("a@mail.example")))).toEqual({ noProvider: "email" });
    const id = (await smtpApi().ok("CreateSMTPProvider", { provider: { description: "pooled", smtp: smtpSettings(port) } })).details.id;
    expect(await failure(sender().sendEmail(server.instanceId, email("a@mail.example"))), "inactive providers send nothing").toEqual({ noProvider: "email" });
    await smtpApi().ok("ActivateSMTPProvider", { id });
    const connectionsBefore = smtp.connections;
    for (let i = 1; i <= 3; i++) await sender().sendEmail(server.instanceId, email(`pooled-${i}@mail.example`));
    expect(smtp.connections - connectionsBefore, "three emails over one pooled connection").toBe(1);

    await smtpApi().ok("PatchSMTPProvider", { id, provider: { smtp: { senderName: "Renamed" } } });
    await sender().sendEmail(server.instanceId, email("renamed@mail.example"));
    expect(smtp.connections - connectionsBefore, "a changed provider gets a connection of its own").toBe(2);
    const renamed = smtp.delivered.find((d) => d.to[0] === "renamed@mail.example")!;
    expect(renamed.mail.from?.value).toEqual([{ address: "noreply@platform.example", name: "Renamed" }]);

    await smtpApi().ok("DeactivateSMTPProvider", { id });
    expect(await failure(sender().sendEmail(server.instanceId, email("a@mail.example")))).toEqual({ noProvider: "email" });
    await smtpApi().ok("DeleteSMTPProvider", { id });
  });

  it("says which failures may pass later: a 4xx reply, a wrong password, a silent server; not a refused recipient", async () => {
    const id = (await smtpApi().ok("CreateSMTPProvider", { provider: { description: "failing", smtp: smtpSettings(port) } })).details.id;
    await smtpApi().ok("ActivateSMTPProvider", { id });
    expect(await failure(sender().sendEmail(server.instanceId, email("refused@mail.example")))).toEqual({
      retryable: false,
      message: "the SMTP server answered RCPT TO with 550 5.1.1 No such mailbox here",
    });
    expect(await failure(sender().sendEmail(server.instanceId, email("later@mail.example")))).toEqual({
      retryable: true,
      message: "the SMTP server answered RCPT TO with 451 4.2.1 Mailbox busy, try later",
    });
    await smtpApi().ok("PatchSMTPProvider", { id, provider: { smtp: { password: "wrong" } } });
    expect(await failure(sender().sendEmail(server.instanceId, email("a@mail.example")))).toMatchObject({
      retryable: true,
      message: expect.stringContaining("535"),
    });

    await smtpApi().ok("PatchSMTPProvider", { id, provider: { smtp: { host: "127.0.0.1", port: silentPort, password: "wrong" } } });
    const started = Date.now();
    expect(await failure(sender().sendEmail(server.instanceId, email("a@mail.example")))).toMatchObject({ retryable: true });
    expect(Date.now() - started, "bounded by PLATFORM_SMTP_TIMEOUT").toBeLessThan(5_000);
    const tested = await smtpApi().call("TestSMTPProvider", { id, test: { receiver: "a@mail.example" } });
    expect(tested).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    await smtpApi().ok("DeleteSMTPProvider", { id });
  });

  it("sends text messages through the active Twilio provider; 5xx may pass later, 4xx not", async () => {
    const smsApi = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
    expect(await failure(sender().sendSms(server.instanceId, { to: "+41791234567", text: "Code 1" }))).toEqual({ noProvider: "sms" });
    const id = (await smsApi.ok("CreateSMSProvider", { provider: { description: "twilio", twilio: twilioSettings() } })).details.id;
    await smsApi.ok("ActivateSMSProvider", { id });
    await sender().sendSms(server.instanceId, { to: "+41791234567", text: "Code 1" });
    expect(Object.fromEntries(twilio.calls.at(-1)!.form)).toEqual({ To: "+41791234567", Body: "Code 1", From: "+15005550006" });
    try {
      twilio.answer = () => ({ status: 503, body: { message: "Service unavailable", code: 20503 } });
      expect(await failure(sender().sendSms(server.instanceId, { to: "+41791234567", text: "Code 2" }))).toEqual({
        retryable: true,
        message: "Twilio answered HTTP 503: Service unavailable (error 20503)",
      });
      twilio.answer = () => ({ status: 400, body: { message: "Invalid 'To' Phone Number", code: 21211 } });
      expect(await failure(sender().sendSms(server.instanceId, { to: "+41791234567", text: "Code 3" }))).toMatchObject({ retryable: false });
    } finally {
      twilio.answer = undefined;
    }
  });
});

describe.each(DATABASE_KINDS)("certificates are verified (%s)", (kind) => {
  let smtp: TestSmtpServer;
  let port: number;
  let server: TestServer;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    port = await smtp.start();
    // No PLATFORM_SMTP_CA_PATH: the test CA is nobody's root.
    server = await startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true" });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("refuses a server whose certificate no trusted CA signed, and sends nothing to it", async () => {
    const admin = serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
    const id = (await admin.ok("CreateSMTPProvider", { provider: { description: "untrusted", smtp: smtpSettings(port) } })).details.id;
    const tested = await admin.call("TestSMTPProvider", { id, test: { receiver: "a@mail.example" } });
    expect(tested).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect((tested as { message: string }).message).toMatch(/certificate/i);
    expect(smtp.delivered).toEqual([]);
  });
});
