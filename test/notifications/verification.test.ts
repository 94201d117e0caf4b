import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { testCertificates, TestSmtpServer, TwilioFake, type Certificates, type Delivered } from "../notification-providers/fakes.js";
import { PASSWORD, smtpSettings, twilioSettings } from "../notification-providers/requests.js";
import { humanUser, uniqueName } from "../users/helpers.js";

/**
 * Email and phone verification end to end: codes recorded in the outbox with the change,
 * sent by the worker through a real SMTP server (and Twilio's fake), in the person's
 * language, verified through the API and the login page's link.
 */

/** People with a password: one without is invited instead (password-reset.test.ts). */
const person = (name: string, extra: JsonObject = {}, profile: JsonObject = {}) => humanUser(name, { password: "Corr3ct-horse!", ...extra }, profile);

const CODE = /\b[ACDEFGHJKMNPQRTUVWXY34679]{8}\b/;
const codeIn = (text: string | undefined) => CODE.exec(text ?? "")?.[0] ?? expect.fail(`no code in ${text}`);

let dir: string;
let certificates: Certificates;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "verification-"));
  certificates = await testCertificates(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function mailbox(smtp: TestSmtpServer) {
  return (address: string, nth = 1): Promise<Delivered> =>
    until(`mail ${nth} to ${address}`, () => smtp.delivered.filter((d) => d.to.includes(address))[nth - 1]);
}

describe.each(DATABASE_KINDS)("email and phone verification (%s)", (kind) => {
  let smtp: TestSmtpServer;
  const twilio = new TwilioFake();
  let server: TestServer;
  let mailTo: ReturnType<typeof mailbox>;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
    const port = await smtp.start();
    mailTo = mailbox(smtp);
    server = await startTestServer(kind, {
      PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${port}`,
      PLATFORM_SMTP_FROM: "Platform <noreply@platform.example>",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_TWILIO_API_URL: await twilio.start(),
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    twilio.close();
  });

  const users = () => serviceClient(PlatformUsers, server.baseUrl, server.adminToken);
  const log = () => serviceClient(PlatformNotifications, server.baseUrl, server.adminToken);
  const isVerified = async (id: string, what: "email" | "phone") => (await users().ok("GetUser", { id })).user.human[what].isVerified === true;
  const notInvalid = async (method: string, id: string, code: string) => {
    expect(await users().call(method, { id, verification: { code } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
      message: "the code is not valid",
    });
  };

  it("mails a new person's code in their language; VerifyEmail takes it once, and a wrong one is refused alike", async () => {
    const name = uniqueName("de");
    const id = (await users().ok("CreateUser", { user: person(name, {}, { displayName: "Grete Müller", preferredLanguage: "de" }) })).details.id;
    const mail = await mailTo(`${name}@mail.example`);
    expect(mail.mail.subject).toMatch(/^Bestätigen Sie Ihre E-Mail-Adresse für /);
    expect(mail.mail.text).toContain("Hallo Grete Müller");
    const code = codeIn(mail.mail.text);
    expect(mail.mail.text).toContain(`http://localhost/ui/login/email/verify?user=${id}&code=${code}`);
    expect(await isVerified(id, "email")).toBe(false);

    await notInvalid("VerifyEmail", id, code === "AAAAAAAA" ? "CCCCCCCC" : "AAAAAAAA");
    await users().ok("VerifyEmail", { id, verification: { code: `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}` } });
    expect(await isVerified(id, "email")).toBe(true);
    await notInvalid("VerifyEmail", id, code);
    expect(await users().call("ResendEmailCode", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
  });

  it("answers the code instead of sending it with returnCode; five wrong codes void it", async () => {
    const name = uniqueName("rc");
    const created = await users().ok("CreateUser", { user: person(name), returnCode: true });
    const id = created.details.id;
    expect(created.emailCode).toMatch(CODE);
    for (let i = 0; i < 5; i++) await notInvalid("VerifyEmail", id, "WRONGCDE");
    await notInvalid("VerifyEmail", id, created.emailCode);
    expect(await isVerified(id, "email")).toBe(false);
    const logged = await log().ok("SearchNotifications", { filters: [{ user: { userId: id } }] });
    expect(logged.result ?? [], "a returned code is never sent").toEqual([]);
  });

  it("replaces the code on ResendEmailCode and on a changed address; the old one stops working", async () => {
    const name = uniqueName("rs");
    const id = (await users().ok("CreateUser", { user: person(name), returnCode: true })).details.id;
    const first = await users().ok("CreateUser", { user: person(uniqueName("x")), returnCode: true });
    const resent = await users().ok("ResendEmailCode", { id, returnCode: true });
    expect(resent.code).toMatch(CODE);
    const changed = await users().ok("PatchUser", { id, user: { human: { email: { address: `${name}-new@mail.example` } } }, returnCode: true });
    expect(changed.emailCode).toMatch(CODE);
    await notInvalid("VerifyEmail", id, resent.code);
    await notInvalid("VerifyEmail", id, first.emailCode);
    await users().ok("VerifyEmail", { id, verification: { code: changed.emailCode } });
    expect((await users().ok("GetUser", { id })).user.human.email).toEqual({ address: `${name}-new@mail.example`, isVerified: true });

    const sent = await users().ok("ResendEmailCode", { id: (await users().ok("CreateUser", { user: person(`${name}s`) })).details.id });
    expect(sent.code ?? "", "a sent code is not answered").toBe("");
    expect(await users().call("ResendEmailCode", { id: "no-such-user" })).toMatchObject({ ok: false, code: Code.NotFound });
  });

  it("the message's link opens a form that verifies when posted, never on the GET a mail scanner makes", async () => {
    const name = uniqueName("ln");
    const id = (await users().ok("CreateUser", { user: person(name) })).details.id;
    const link = new URL(/http:\/\/localhost\/ui\/login\/email\/verify\?\S+/.exec((await mailTo(`${name}@mail.example`)).mail.text ?? "")![0]);
    const page = await fetch(`${server.baseUrl}${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`value="${link.searchParams.get("code")}"`);
    expect(await isVerified(id, "email")).toBe(false);

    const post = (code: string) => fetch(`${server.baseUrl}${link.pathname}`, { method: "POST", body: new URLSearchParams({ user: id, code }) });
    const wrong = await post("AAAAAAAA" === link.searchParams.get("code") ? "CCCCCCCC" : "AAAAAAAA");
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("not valid");
    const right = await post(link.searchParams.get("code")!);
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('role="status"');
    expect(await isVerified(id, "email")).toBe(true);
    expect((await post(link.searchParams.get("code")!)).status, "a used code").toBe(400);
    expect((await post("")).status).toBe(400);
    expect((await fetch(`${server.baseUrl}${link.pathname}`, { method: "POST", body: new URLSearchParams({ user: "nobody", code: "AAAAAAAA" }) })).status).toBe(
      400,
    );
  });

  it("texts a phone number's code through the active SMS provider; VerifyPhone takes it", async () => {
    const sms = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
    const provider = (await sms.ok("CreateSMSProvider", { provider: { description: "twilio", twilio: twilioSettings() } })).details.id;
    await sms.ok("ActivateSMSProvider", { id: provider });
    const number = `+4179${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    const id = (await users().ok("CreateUser", { user: person(uniqueName("ph"), { phone: { number } }) })).details.id;
    const call = await until("Twilio's call", () => twilio.calls.find((c) => c.form.get("To") === number));
    expect(call.form.get("From")).toBe("+15005550006");
    const code = codeIn(call.form.get("Body") ?? "");
    await notInvalid("VerifyPhone", id, code === "AAAAAAAA" ? "CCCCCCCC" : "AAAAAAAA");
    await notInvalid("VerifyEmail", id, code);
    await users().ok("VerifyPhone", { id, verification: { code } });
    expect(await isVerified(id, "phone")).toBe(true);
    const sent = await until("the log says sent", async () => {
      const found =
        (await log().ok("SearchNotifications", { filters: [{ user: { userId: id } }, { channel: { channel: "NOTIFICATION_CHANNEL_SMS" } }] })).result ?? [];
      return found[0]?.status === "NOTIFICATION_STATUS_SENT" && found[0];
    });
    expect(sent).toMatchObject({ kind: "NOTIFICATION_KIND_VERIFY_PHONE", recipient: number, language: "en", attempts: 1 });
    await sms.ok("DeleteSMSProvider", { id: provider });
  });

  it("logs each message without its code, in no answer, event or stored row in the clear", async () => {
    const name = uniqueName("lg");
    const id = (await users().ok("CreateUser", { user: person(name) })).details.id;
    const code = codeIn((await mailTo(`${name}@mail.example`)).mail.text);
    const found = await until("the log says sent", async () => {
      const rows = (await log().ok("SearchNotifications", { filters: [{ user: { userId: id } }] })).result ?? [];
      return rows[0]?.status === "NOTIFICATION_STATUS_SENT" && rows;
    });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      kind: "NOTIFICATION_KIND_VERIFY_EMAIL",
      channel: "NOTIFICATION_CHANNEL_EMAIL",
      recipient: `${name}@mail.example`,
      attempts: 1,
    });
    expect(JSON.stringify(found)).not.toContain(code);
    const db = server.service.store.db;
    const rows = [
      ...(await db.selectFrom("events").selectAll().where("instance_id", "=", server.instanceId).where("aggregate_id", "=", id).execute()),
      ...(await db.selectFrom("notifications").selectAll().where("user_id", "=", id).execute()),
      ...(await db.selectFrom("user_codes").selectAll().where("user_id", "=", id).execute()),
    ];
    expect(rows.length).toBeGreaterThan(2);
    expect(JSON.stringify(rows, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v))).not.toContain(code);
  });

  it.each(PROTOCOLS)("verifies and resends alike over %s", async (protocol) => {
    const api = serviceClient(PlatformUsers, server.baseUrl, server.adminToken, protocol);
    const id = (await api.ok("CreateUser", { user: person(uniqueName("pr")), returnCode: true })).details.id;
    const { code } = await api.ok("ResendEmailCode", { id, returnCode: true });
    expect(await api.call("VerifyEmail", { id, verification: { code: "" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
    expect(await api.call("VerifyEmail", { id, verification: { code: "AAAAAAA9" } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
      message: "the code is not valid",
    });
    expect((await api.ok("VerifyEmail", { id, verification: { code } })).details.id).toBe(id);
    expect(await api.call("ResendPhoneCode", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
  });

  it.each(PROTOCOLS)(
    "answers no code to a person acting on itself over %s: it is sent, and only an administrator's returnCode answers it",
    async (protocol) => {
      // An address the person does not own: with the code in its answer it could verify it.
      const name = uniqueName("own");
      const number = `+4177${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
      const id = (await users().ok("CreateUser", { user: person(name, { phone: { number } }) })).details.id as string;
      const { token } = await users().ok("AddPersonalAccessToken", { id, pat: { expirationDate: new Date(Date.now() + 3_600_000).toISOString() } });
      const own = serviceClient(PlatformUsers, server.baseUrl, token, protocol);
      for (const rpc of ["ResendEmailCode", "ResendPhoneCode"]) {
        const refused = await own.call(rpc, { id, returnCode: true });
        expect(refused, rpc).toMatchObject({
          ok: false,
          code: Code.PermissionDenied,
          message: "return_code needs user.write on the user, not only acting on yourself: a code answered to oneself would prove nothing",
        });
        if (protocol === "rest") expect(refused.httpStatus, rpc).toBe(403);
        expect((await own.ok(rpc, { id })).code ?? "", `${rpc} without returnCode: sent, not answered`).toBe("");
        expect((await users().ok(rpc, { id, returnCode: true })).code, `${rpc} by an administrator`).toMatch(CODE);
      }
      // Changing one's own address is no one's own (no `self`), with or without returnCode.
      const renamed = { id, user: { human: { email: { address: `${name}-2@mail.example` } } }, returnCode: true };
      expect(await own.call("PatchUser", renamed)).toMatchObject({ ok: false, code: Code.PermissionDenied });
      expect((await users().ok("PatchUser", renamed)).emailCode, "an administrator's").toMatch(CODE);
      expect(await isVerified(id, "email")).toBe(false);
      expect(await isVerified(id, "phone")).toBe(false);
    },
  );
});

describe.each(DATABASE_KINDS)("messages that wait, fail and are retried (%s)", (kind) => {
  let smtp: TestSmtpServer;
  let server: TestServer;
  let mailTo: ReturnType<typeof mailbox>;
  let smtpPort: number;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    mailTo = mailbox(smtp);
    smtpPort = await smtp.start();
    server = await startTestServer(kind, {
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  const users = () => serviceClient(PlatformUsers, server.baseUrl, server.adminToken);
  const log = () => serviceClient(PlatformNotifications, server.baseUrl, server.adminToken);
  const smtpApi = () => serviceClient(PlatformSMTPProviders, server.baseUrl, server.adminToken);
  const messagesOf = async (userId: string) => (await log().ok("SearchNotifications", { filters: [{ user: { userId } }] })).result ?? [];

  it("keeps a message pending while no provider is active and sends it as soon as one is activated", async () => {
    const name = uniqueName("wt");
    const id = (await users().ok("CreateUser", { user: person(name) })).details.id;
    const waiting = await until("the first attempt", async () => (await messagesOf(id)).find((m: { lastError?: string }) => m.lastError));
    expect(waiting).toMatchObject({ status: "NOTIFICATION_STATUS_PENDING", kind: "NOTIFICATION_KIND_VERIFY_EMAIL" });
    expect(waiting.lastError).toBe("no SMTP provider is active");
    const provider = (await smtpApi().ok("CreateSMTPProvider", { provider: { description: "late", smtp: smtpSettings(smtpPort) } })).details.id;
    const started = Date.now();
    await smtpApi().ok("ActivateSMTPProvider", { id: provider });
    await mailTo(`${name}@mail.example`);
    expect(Date.now() - started, "activation sends waiting messages at once, not after the minute's wait").toBeLessThan(10_000);
    await until("the log says sent", async () => (await messagesOf(id))[0]?.status === "NOTIFICATION_STATUS_SENT");
  });

  it("fails a message the server refuses for good; RetryNotification sends it again; only failed ones may be retried", async () => {
    const refused = (
      await users().ok("CreateUser", {
        user: {
          username: uniqueName("rf"),
          human: { profile: { givenName: "R", familyName: "F" }, email: { address: `refused@${uniqueName("d")}.example` }, password: "Corr3ct-horse!" },
        },
      })
    ).details.id;
    const failed = await until("the refusal", async () =>
      (await messagesOf(refused)).find((m: { status: string }) => m.status === "NOTIFICATION_STATUS_FAILED"),
    );
    expect(failed.lastError).toContain("550");
    expect(failed.attempts).toBe(1);
    const retried = await log().ok("RetryNotification", { id: failed.id });
    expect(retried.notification).toMatchObject({ id: failed.id, status: "NOTIFICATION_STATUS_PENDING" });
    expect(retried.notification.attempts ?? 0).toBe(0);
    await until("refused again", async () =>
      (await messagesOf(refused)).find((m: { status: string; attempts: number }) => m.status === "NOTIFICATION_STATUS_FAILED" && m.attempts === 1),
    );

    const name = uniqueName("ok");
    const sentTo = (await users().ok("CreateUser", { user: person(name) })).details.id;
    await mailTo(`${name}@mail.example`);
    const sent = await until("sent", async () => (await messagesOf(sentTo)).find((m: { status: string }) => m.status === "NOTIFICATION_STATUS_SENT"));
    expect(await log().call("RetryNotification", { id: sent.id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(await log().call("RetryNotification", { id: "01a2194a-0000-7000-8000-000000000000" })).toMatchObject({ ok: false, code: Code.NotFound });

    const other = await server.createInstance("127.0.0.1");
    const foreign = serviceClient(PlatformNotifications, other.baseUrl, other.adminToken);
    const foreignRetry = await foreign.call("RetryNotification", { id: failed.id });
    expect(foreignRetry, JSON.stringify(foreignRetry)).toMatchObject({ ok: false, code: Code.NotFound });
    expect((await foreign.ok("SearchNotifications", { filters: [] })).result ?? []).toEqual([]);
  });

  it("filters the log by kind, channel, status and creation date, and refuses filters it cannot read", async () => {
    const all =
      (
        await log().ok("SearchNotifications", {
          filters: [{ kind: { kind: "NOTIFICATION_KIND_VERIFY_EMAIL" } }, { channel: { channel: "NOTIFICATION_CHANNEL_EMAIL" } }],
        })
      ).result ?? [];
    expect(all.length).toBeGreaterThan(0);
    expect((await log().ok("SearchNotifications", { filters: [{ channel: { channel: "NOTIFICATION_CHANNEL_SMS" } }] })).result ?? []).toEqual([]);
    expect(
      (await log().ok("SearchNotifications", { filters: [{ creationDate: { since: new Date(Date.now() + 3_600_000).toISOString() } }] })).result ?? [],
    ).toEqual([]);
    expect(await log().call("SearchNotifications", { filters: [{ status: { status: "NOTIFICATION_STATUS_UNSPECIFIED" } }] })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
  });
});
