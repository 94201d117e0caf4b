import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformUsers } from "../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { AUTH_CODE, BASIC, WEB, appClient, oidc, projectClient } from "../apps/helpers.js";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { testCertificates, TestSmtpServer, TwilioFake, type Certificates, type Delivered } from "../notification-providers/fakes.js";
import { twilioSettings } from "../notification-providers/requests.js";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { humanUser, uniqueName } from "../users/helpers.js";
import { Browser, alertText, formWith, parseForms, unescapeHtml, type Page } from "../oidc/browser.js";

/**
 * Password reset and invitations end to end: ResetPassword and SetPassword's
 * verification_code, the invitation a person without a password gets, the pages their
 * links open, and "Forgot password?" in a sign-in, whose answer tells nothing.
 */

const PASSWORD = "Corr3ct-horse!";
const NEW_PASSWORD = "N3w-and-better!";
const CODE = /\b[ACDEFGHJKMNPQRTUVWXY34679]{8}\b/;
const CB = "https://rp.example/cb";
const en = TEXTS.en;
const codeIn = (text: string | undefined) => CODE.exec(text ?? "")?.[0] ?? expect.fail(`no code in ${text}`);
const linkIn = (text: string | undefined, path: string) =>
  new URL(new RegExp(`http://localhost${path}\\?\\S+`).exec(text ?? "")?.[0] ?? expect.fail(`no link to ${path} in ${text}`));

let dir: string;
let certificates: Certificates;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "password-reset-"));
  certificates = await testCertificates(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(DATABASE_KINDS)("password reset, invitations and verified email at sign-in (%s)", (kind) => {
  let smtp: TestSmtpServer;
  const twilio = new TwilioFake();
  let server: TestServer;
  let config: client.Configuration;
  let clientId: string;
  beforeAll(async () => {
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
    const port = await smtp.start();
    server = await startTestServer(kind, {
      PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${port}`,
      PLATFORM_SMTP_FROM: "Platform <noreply@platform.example>",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
      PLATFORM_NOTIFICATION_POLL_INTERVAL: "50ms",
      PLATFORM_PASSWORD_RESET_ANSWER_TIME: "400ms",
      PLATFORM_LOGIN_RATE_PER_IP: "1000",
      PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000",
      PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true",
      PLATFORM_TWILIO_API_URL: await twilio.start(),
    });
    const projectId = (await projectClient(server.baseUrl, server.adminToken).ok("CreateProject", { project: { name: "reset" } })).details.id as string;
    const made = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: "web", oidc: oidc({ redirectUris: [CB], appType: WEB, authMethodType: BASIC, grantTypes: [AUTH_CODE] } as never) },
    });
    clientId = made.clientId as string;
    const discovered = await client.discovery(new URL(server.baseUrl), clientId, undefined, undefined, { execute: [client.allowInsecureRequests] });
    config = new client.Configuration(
      discovered.serverMetadata(),
      clientId,
      { client_secret: made.clientSecret as string },
      client.ClientSecretBasic(made.clientSecret as string),
    );
    client.allowInsecureRequests(config);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    twilio.close();
  });

  const users = () => serviceClient(PlatformUsers, server.baseUrl, server.adminToken);
  const mailsTo = (address: string) => smtp.delivered.filter((d) => d.to.includes(address));
  const mailTo = (address: string, nth = 1): Promise<Delivered> => until(`mail ${nth} to ${address}`, () => mailsTo(address)[nth - 1]);
  const resetMailsTo = (address: string) => mailsTo(address).filter((m) => (m.mail.text ?? "").includes("/ui/login/password/reset"));
  const person = async (extra = {}) => {
    const name = uniqueName("pw");
    const id = (await users().ok("CreateUser", { user: humanUser(name, { password: PASSWORD, ...extra }) })).details.id as string;
    return { id, name, email: `${name}@mail.example` };
  };
  /** Whether the password works: SetPassword by an administrator checks a current password when given. */
  const passwordIs = async (id: string, password: string) =>
    (await users().call("SetPassword", { id, password: { newPassword: password, currentPassword: password } })).ok;
  const notValid = { ok: false, code: Code.InvalidArgument, message: "the code is not valid" };

  it("mails a reset code with a link; SetPassword takes it as verification_code once, and ResetPassword waits between codes", async () => {
    const { id, email } = await person();
    await users().ok("ResetPassword", { id });
    const mail = await until("the reset mail", () => resetMailsTo(email)[0]);
    expect(mail.mail.subject).toBeTruthy();
    const code = codeIn(mail.mail.text);
    expect(linkIn(mail.mail.text, "/ui/login/password/reset").searchParams.get("code")).toBe(code);
    expect(await users().call("ResetPassword", { id }), "a second code within PLATFORM_PASSWORD_RESET_INTERVAL").toMatchObject({
      ok: false,
      code: Code.ResourceExhausted,
    });

    expect(await users().call("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: "AAAAAAAA" } })).toMatchObject(notValid);
    expect(await users().call("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: code, changeRequired: true } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
    await users().ok("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: code } });
    expect(await passwordIs(id, NEW_PASSWORD)).toBe(true);
    expect(await users().call("SetPassword", { id, password: { newPassword: PASSWORD, verificationCode: code } }), "a used code").toMatchObject(notValid);
  });

  it("texts the code to a verified phone number when the email address is not verified", async () => {
    const sms = serviceClient(PlatformSMSProviders, server.baseUrl, server.adminToken);
    const provider = (await sms.ok("CreateSMSProvider", { provider: { description: "twilio", twilio: twilioSettings() } })).details.id;
    await sms.ok("ActivateSMSProvider", { id: provider });
    try {
      const number = `+4178${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
      const { id, email } = await person({ phone: { number, isVerified: true } });
      await users().ok("ResetPassword", { id });
      const call = await until("Twilio's call", () => twilio.calls.find((c) => c.form.get("To") === number));
      const code = codeIn(call.form.get("Body") ?? "");
      const logged = await until(
        "the log",
        async () =>
          (
            await serviceClient(PlatformNotifications, server.baseUrl, server.adminToken).ok("SearchNotifications", {
              filters: [{ user: { userId: id } }, { channel: { channel: "NOTIFICATION_CHANNEL_SMS" } }],
            })
          ).result?.[0],
      );
      expect(logged).toMatchObject({ kind: "NOTIFICATION_KIND_PASSWORD_RESET_SMS", recipient: number });
      await users().ok("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: code } });
      expect(await passwordIs(id, NEW_PASSWORD)).toBe(true);
      expect(resetMailsTo(email), "not by email").toEqual([]);
    } finally {
      await sms.ok("DeleteSMSProvider", { id: provider });
    }
  });

  it("refuses what has nothing to reset, and answers the code instead of sending it", async () => {
    const machine = (await users().ok("CreateUser", { user: { username: uniqueName("svc"), machine: { name: "svc" } } })).details.id as string;
    expect(await users().call("ResetPassword", { id: machine })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    expect(await users().call("ResetPassword", { id: "no-such-user" })).toMatchObject({ ok: false, code: Code.NotFound });
    const { id, email } = await person();
    const { code } = await users().ok("ResetPassword", { id, returnCode: true });
    expect(code).toMatch(CODE);
    await users().ok("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: code.toLowerCase() } });
    await mailTo(email);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resetMailsTo(email), "a returned code is not sent").toEqual([]);
  });

  it("invites a person created without a password; the invitation sets the first password and verifies the email, a new one voids the old", async () => {
    const name = uniqueName("inv");
    const email = `${name}@mail.example`;
    const id = (await users().ok("CreateUser", { user: humanUser(name) })).details.id as string;
    const first = await mailTo(email);
    const firstLink = linkIn(first.mail.text, "/ui/login/invite");
    expect(first.mail.text, "an invitation, not a verification").not.toContain("/ui/login/email/verify");
    const resent = await users().ok("ResendInvite", { id, returnCode: true });
    expect(resent.code).toMatch(CODE);
    expect(
      await users().call("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: firstLink.searchParams.get("code") } }),
      "the older invitation",
    ).toMatchObject(notValid);
    await users().ok("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: resent.code } });
    const user = (await users().ok("GetUser", { id })).user;
    expect(user.human.email).toEqual({ address: email, isVerified: true });
    expect(user.human.hasPassword).toBe(true);
    expect(await users().call("ResendInvite", { id }), "invitations are for people without a password").toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
    });

    const returned = await users().ok("CreateUser", { user: humanUser(uniqueName("inv")), returnCode: true });
    expect(returned.inviteCode).toMatch(CODE);
    expect(returned.emailCode ?? "").toBe("");
  });

  it.each(PROTOCOLS)("resets and invites alike over %s", async (protocol) => {
    const api = serviceClient(PlatformUsers, server.baseUrl, server.adminToken, protocol);
    const { id } = await person();
    const { code } = await api.ok("ResetPassword", { id, returnCode: true });
    expect(await api.call("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: "AAAAAAA9" } })).toMatchObject(notValid);
    await api.ok("SetPassword", { id, password: { newPassword: NEW_PASSWORD, verificationCode: code } });
    const invited = (await api.ok("CreateUser", { user: humanUser(uniqueName("pi")), returnCode: true })).details.id;
    expect((await api.ok("ResendInvite", { id: invited, returnCode: true })).code).toMatch(CODE);
  });

  it.each(PROTOCOLS)("answers no reset code to a person acting on itself over %s: a token alone never sets a new password", async (protocol) => {
    const { id, email } = await person();
    const { token } = await users().ok("AddPersonalAccessToken", { id, pat: { expirationDate: new Date(Date.now() + 3_600_000).toISOString() } });
    const own = serviceClient(PlatformUsers, server.baseUrl, token, protocol);
    const refused = await own.call("ResetPassword", { id, returnCode: true });
    expect(refused).toMatchObject({
      ok: false,
      code: Code.PermissionDenied,
      message: "return_code needs user.credential.write on the user, not only acting on yourself: a code answered to oneself would prove nothing",
    });
    if (protocol === "rest") expect(refused.httpStatus).toBe(403);
    expect((await own.ok("ResetPassword", { id })).code ?? "", "sent, not answered").toBe("");
    expect(codeIn((await until("the reset mail", () => resetMailsTo(email)[0])).mail.text)).toMatch(CODE);
    expect(await passwordIs(id, PASSWORD)).toBe(true);

    // Invitations are no one's own: with or without returnCode.
    const invited = (await users().ok("CreateUser", { user: humanUser(uniqueName("oi")) })).details.id as string;
    const invitedToken = (await users().ok("AddPersonalAccessToken", { id: invited, pat: { expirationDate: new Date(Date.now() + 3_600_000).toISOString() } }))
      .token;
    for (const returnCode of [true, false]) {
      expect(await serviceClient(PlatformUsers, server.baseUrl, invitedToken, protocol).call("ResendInvite", { id: invited, returnCode })).toMatchObject({
        ok: false,
        code: Code.PermissionDenied,
      });
    }
    expect((await users().ok("ResendInvite", { id: invited, returnCode: true })).code, "an administrator's").toMatch(CODE);
  });

  it("the links' pages set the password when posted, under the policy, and refuse a wrong code alike", async () => {
    const { id, email } = await person();
    await users().ok("ResetPassword", { id });
    const link = linkIn((await until("the reset mail", () => resetMailsTo(email)[0])).mail.text, "/ui/login/password/reset");
    const b = new Browser(server.baseUrl);
    let page = await b.open(`${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    const form = formWith(page.html, "passwordConfirmation");
    expect(form.fields.code).toBe(link.searchParams.get("code"));
    expect(form.visible).toEqual(["code", "password", "passwordConfirmation"]);
    page = await b.submit(form, { password: NEW_PASSWORD, passwordConfirmation: "other" }, page.url);
    expect([page.status, alertText(page.html)]).toEqual([400, en.passwordsDiffer]);
    page = await b.submit(formWith(page.html, "passwordConfirmation"), { password: "short", passwordConfirmation: "short" }, page.url);
    expect(page.status).toBe(400);
    expect(alertText(page.html)).toContain(en.passwordPolicy);
    page = await b.submit(
      formWith(page.html, "passwordConfirmation"),
      { code: "AAAAAAAA", password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD },
      page.url,
    );
    expect([page.status, alertText(page.html)]).toEqual([400, en.codeInvalid]);
    expect(await passwordIs(id, PASSWORD), "nothing changed yet").toBe(true);
    page = await b.submit(
      formWith(page.html, "passwordConfirmation"),
      { code: link.searchParams.get("code")!, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD },
      page.url,
    );
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain(en.passwordSet);
    expect(await passwordIs(id, NEW_PASSWORD)).toBe(true);

    const name = uniqueName("inl");
    const invited = (await users().ok("CreateUser", { user: humanUser(name, {}, { preferredLanguage: "de" }) })).details.id as string;
    const invite = linkIn((await mailTo(`${name}@mail.example`)).mail.text, "/ui/login/invite");
    page = await b.open(`${invite.pathname}${invite.search}`);
    expect(page.html).toContain(TEXTS.de.acceptInviteTitle);
    page = await b.submit(formWith(page.html, "passwordConfirmation"), { password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD }, page.url);
    expect(page.html).toContain(TEXTS.de.passwordSet);
    expect((await users().ok("GetUser", { id: invited })).user.human.email.isVerified).toBe(true);
  });

  async function startSignIn(b: Browser) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CB,
      scope: "openid",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    return { page: await b.open(url.href), state, verifier };
  }

  /** From the login name page to the answer of "Forgot password?" for `loginName`, and how long it took. */
  async function askReset(b: Browser, page: Page, shownName: string, loginName: string) {
    page = await b.submit(formWith(page.html, "loginName"), { loginName: shownName }, page.url);
    const link = /href="([^"]*\/reset\?[^"]*)"/.exec(page.html)?.[1]?.replace(/&amp;/g, "&") ?? expect.fail(`no reset link in ${page.html}`);
    page = await b.open(new URL(link, page.url).href);
    expect(formWith(page.html, "loginName").fields.loginName).toBe(shownName);
    const started = Date.now();
    page = await b.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    return { page, ms: Date.now() - started };
  }

  it("'Forgot password?' answers alike for every login name, sends the code to an existing one, and signs in with the new password", async () => {
    const { id, name, email } = await person();
    const b = new Browser(server.baseUrl);
    const unknown = await askReset(b, (await startSignIn(b)).page, name, `nobody-${name}`);
    const known = await askReset(b, (await startSignIn(b)).page, name, name);
    const shape = (p: Page) => p.html.replace(/value="[^"]*"/g, 'value=""').replace(/\/ui\/login\/[^/"]+(\/|")/g, "/ui/login/UID$1");
    expect([unknown.page.status, shape(unknown.page)]).toEqual([known.page.status, shape(known.page)]);
    expect(unknown.ms).toBeGreaterThanOrEqual(390);
    expect(known.ms).toBeGreaterThanOrEqual(390);

    // The code has the focus (the new password comes after it); a way back to signing in.
    expect(known.page.html).toMatch(/<input id="code"[^>]* autofocus/);
    expect(known.page.html).not.toMatch(/<input id="password"[^>]* autofocus/);
    expect(known.page.html).toMatch(new RegExp(`<a href="/ui/login/[^/"]+">${en.externalBack}</a>`));
    // "Send a new code" on the code page asks again for the same login name (within the
    // per-user interval it sends nothing, and says the same).
    const resend =
      parseForms(known.page.html).find((f) => f.action.endsWith("/reset") && f.fields.loginName === name) ??
      expect.fail(`no "send a new code" in ${known.page.html}`);
    expect(known.page.html).toContain(`>${en.sendNewCode}</button>`);
    const resent = await b.submit(resend, {}, known.page.url);
    expect(resent.status).toBe(200);
    expect(unescapeHtml(resent.html)).toContain(en.resetCodeSent);

    const code = codeIn((await until("the reset mail", () => resetMailsTo(email)[0])).mail.text);
    let page = await b.submit(
      formWith(known.page.html, "passwordConfirmation"),
      { code: "AAAAAAAA", password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD },
      known.page.url,
    );
    expect([page.status, alertText(page.html)]).toEqual([400, en.codeInvalid]);
    page = await b.submit(formWith(page.html, "passwordConfirmation"), { code, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD }, page.url);
    expect(page.left, page.html).toBe(true);
    expect(new URL(page.url).origin + new URL(page.url).pathname).toBe(CB);
    expect(await passwordIs(id, NEW_PASSWORD)).toBe(true);

    // A second request moments later sends nothing, and says the same.
    const other = new Browser(server.baseUrl);
    const again = await askReset(other, (await startSignIn(other)).page, name, name);
    expect(shape(again.page)).toBe(shape(known.page));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(resetMailsTo(email)).toHaveLength(1);
  });
  it("with require_verified_email, asks a person with an unverified address for the emailed code before the sign-in finishes", async () => {
    const settings = serviceClient(PlatformLoginSettings, server.baseUrl, server.adminToken);
    await settings.ok("SetLoginSettings", { settings: { requireVerifiedEmail: { set: true } } });
    try {
      const { id, name, email } = await person();
      const b = new Browser(server.baseUrl);
      const s = await startSignIn(b);
      let page = await b.submit(formWith(s.page.html, "loginName"), { loginName: name }, s.page.url);
      page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
      expect([page.status, page.left]).toEqual([200, false]);
      expect(page.html).toContain(en.verifyEmailIntro);
      const codeForm = formWith(page.html, "code");
      const forged = await b.submit(codeForm, { code: "AAAAAAAA", proof: "forged" }, page.url);
      expect(forged.status, "the form's proof of the password step").toBe(403);
      page = await b.submit(codeForm, { code: "AAAAAAAA" }, page.url);
      expect([page.status, alertText(page.html)]).toEqual([400, en.codeInvalid]);
      // Another code on request; the newest mail's code is the one that counts.
      const verifyMails = () => mailsTo(email).filter((m) => (m.mail.text ?? "").includes("/ui/login/email/verify"));
      // One at creation, one when the step began; the next replaces them.
      await until("the step's code", () => verifyMails()[1]);
      page = await b.submit(formWith(page.html, "resend"), {}, page.url);
      expect(page.status).toBe(200);
      const newest = await until("another code", () => verifyMails()[2]);
      page = await b.submit(formWith(page.html, "code"), { code: codeIn(newest.mail.text) }, page.url);
      expect(page.left, `${page.url} ${page.html}`).toBe(true);
      const tokens = await client.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
      expect(tokens.claims()!.sub).toBe(id);
      expect((await users().ok("GetUser", { id })).user.human.email.isVerified).toBe(true);

      // Verified now: the next sign-in asks nothing more.
      const again = new Browser(server.baseUrl);
      const next = await startSignIn(again);
      page = await again.submit(formWith(next.page.html, "loginName"), { loginName: name }, next.page.url);
      page = await again.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
      expect(page.left, page.html).toBe(true);
    } finally {
      await settings.ok("SetLoginSettings", { settings: { requireVerifiedEmail: { reset: true } } });
    }
  });
});
