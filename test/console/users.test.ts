import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { testCertificates, TestSmtpServer } from "../notification-providers/fakes.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner } from "./helpers.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import { uniqueName, Users } from "../users/helpers.js";

/*
 * People and service accounts in the console (console/src/pages/Users.tsx, User.tsx), in
 * headless Chromium as an instance administrator uses them: finding users on the server,
 * inviting a person (the invitation caught by a real SMTP server, accepted in another
 * browser, leading to the console), their profile and state, and a service account's token
 * and client secret, each shown once and copied; the token then works against the API.
 */

const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`users in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let smtp: TestSmtpServer;
  let certificatesDir: string;
  let admin: string;

  beforeAll(async () => {
    certificatesDir = await mkdtemp(join(tmpdir(), "console-smtp-"));
    const certificates = await testCertificates(certificatesDir);
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
    const mail = {
      PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${await smtp.start()}`,
      PLATFORM_SMTP_FROM: "noreply@platform.example",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
    };
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000", ...mail }),
      launchChromium(),
    ]);
    admin = await instanceOwner(server, "root");
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
    await rm(certificatesDir, { recursive: true, force: true });
  });

  const inspect = consoleInspector(kind);

  async function signIn(page: Page, loginName: string) {
    await page.getByLabel(en.loginName).fill(loginName);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(CONSOLE_PASSWORD);
    await page.getByRole("button", { name: en.signIn }).click();
    await page.waitForURL((u) => u.pathname.startsWith("/ui/console/") && !u.pathname.endsWith("/callback"));
  }

  /** A secret the page shows once, in its read-only field. */
  const shownOnce = (page: Page, label: string) => page.getByRole("textbox", { name: label, exact: true }).inputValue();

  it("finds, invites, edits, locks and deletes a person; a service account's token and secret, shown once", async () => {
    const context = await browser.newContext({ locale: "en-US", permissions: ["clipboard-read", "clipboard-write"] });
    const tab = await openTab(browser, context);
    const { page } = tab;
    try {
      await page.goto(`${server.baseUrl}/ui/console/`);
      await signIn(page, admin);
      await page.getByRole("link", { name: "Users" }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("rowheader").first().waitFor();
      await inspect("users", tab);

      // Found on the server, by login name.
      await page.getByRole("searchbox", { name: "Find" }).fill(admin);
      await expect.poll(async () => (await page.getByRole("row").allInnerTexts()).slice(1).map((r) => r.includes(admin))).toEqual([true]);

      // A person without a password is invited by email.
      const username = uniqueName("grace");
      const email = `${username}@mail.example`;
      await page.getByRole("button", { name: "New person" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Username").fill(username);
      await dialog.getByLabel("Given name").fill("Grace");
      await dialog.getByLabel("Family name").fill("Hopper");
      await dialog.getByLabel("Email").fill(email);
      await inspect("user-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name: "Grace Hopper" }).waitFor();
      await page.getByText("None yet: invited").waitFor();
      const personId = new URL(page.url()).pathname.split("/").pop()!;
      await inspect("user-person", tab);
      const invitation = await until(`the invitation to ${email}`, () => smtp.delivered.find((m) => m.to.includes(email)));
      const link = new URL(/https?:\/\/\S+\/ui\/login\/invite\?\S+/.exec(invitation.mail.text ?? "")![0]);

      await page.getByLabel("Nickname").fill("Amazing Grace");
      await page.getByRole("button", { name: "Save profile" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await new Users(server).get(personId)).human.profile.nickName).toBe("Amazing Grace");

      await page.getByRole("button", { name: "Lock", exact: true }).click();
      await page.getByText("Locked", { exact: true }).waitFor();
      await page.getByRole("button", { name: "Unlock" }).click();
      await page.getByText("Active", { exact: true }).waitFor();

      // The invitation, accepted in another browser, leads to the console.
      const invited = await openTab(browser);
      try {
        await invited.page.goto(`${server.baseUrl}${link.pathname}${link.search}`);
        await invited.page.getByLabel(en.newPassword, { exact: true }).fill(CONSOLE_PASSWORD);
        await invited.page.getByLabel(en.confirmPassword).fill(CONSOLE_PASSWORD);
        await invited.page.getByRole("button", { name: en.setPassword }).click();
        await invited.page.getByText(en.passwordSet).waitFor();
        await invited.page.goto(`${server.baseUrl}/ui/console/`);
        await signIn(invited.page, username);
        await invited.page.getByText("You have no administration rights here.").waitFor();
      } finally {
        await invited.page.context().close();
      }
      await page.reload();
      await page.getByText("Set", { exact: true }).waitFor();

      await page.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete" }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();
      expect((await new Users(server).call("GetUser", { id: personId })).ok).toBe(false);

      // A service account: a token and a client secret, each shown once.
      await page.getByRole("button", { name: "New service account" }).click();
      await page.getByRole("dialog").getByLabel("Username").fill(uniqueName("robot"));
      await page.getByRole("dialog").getByLabel("Name", { exact: true }).fill("CI robot");
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name: "CI robot" }).waitFor();
      await page.getByRole("button", { name: "New token" }).click();
      const token = await shownOnce(page, "New token");
      await page.getByRole("button", { name: "Copy the new token" }).click();
      await page.getByRole("status").filter({ hasText: "Copied" }).waitFor();
      expect(
        await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()),
      ).toBe(token);
      const mine = await fetch(`${server.baseUrl}/resources/v3alpha/memberships/me/permissions`, { headers: { authorization: `Bearer ${token}` } });
      expect(mine.status).toBe(200);
      await page.getByRole("button", { name: /^Revoke token / }).waitFor();
      await page.getByRole("button", { name: "Generate a secret" }).click();
      expect(await shownOnce(page, "Client secret")).toMatch(/^\S{20,}$/);
      await inspect("user-service-account", tab);
    } finally {
      await context.close();
    }
  }, 120_000);
});
