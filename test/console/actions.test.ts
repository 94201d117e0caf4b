import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformNotifications } from "../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { testCertificates, TestSmtpServer } from "../notification-providers/fakes.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { until } from "../support/until.js";
import { humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * Actions and the message log in the console (console/src/pages/{Targets,Target,Executions,
 * Deliveries,Messages}.tsx), in headless Chromium: a target made in the console (its signing
 * key shown once), an execution on every event calling it, a real delivery to a receiver
 * listed and sent again; the target's settings, a new key, deleting it; a message refused by
 * a real SMTP server, listed as failed with the server's words, and sent again.
 */

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`actions and messages in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let smtp: TestSmtpServer;
  let receiver: Receiver;
  let receiverUrl: string;
  let certificatesDir: string;
  let admin: string;

  beforeAll(async () => {
    certificatesDir = await mkdtemp(join(tmpdir(), "console-actions-"));
    const certificates = await testCertificates(certificatesDir);
    smtp = new TestSmtpServer({ certificates, users: { system: "System-Pa55" } });
    receiver = new Receiver();
    receiverUrl = await receiver.start();
    const mail = {
      PLATFORM_SMTP_URL: `smtp://system:System-Pa55@localhost:${await smtp.start()}`,
      PLATFORM_SMTP_FROM: "noreply@platform.example",
      PLATFORM_SMTP_CA_PATH: certificates.caPath,
    };
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_ACTIONS_DELIVERY_POLL_INTERVAL: "50ms", ...mail }),
      launchChromium(),
    ]);
    // A verified address: no message of the owner's own in the message log.
    admin = await instanceOwner(server, "ops", { email: { address: `${uniqueName("ops")}@mail.example`, isVerified: true } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    receiver?.close();
    await smtp?.close();
    await rm(certificatesDir, { recursive: true, force: true });
  });

  const inspect = consoleInspector(kind);

  it("a target and an execution on every event; the delivery listed and sent again; the target changed, rekeyed and deleted", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "Actions", exact: true }).click();
      await page.getByRole("heading", { name: "Actions" }).waitFor();

      const name = uniqueName("audit-hook");
      await page.getByRole("button", { name: "New target" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill(name);
      await dialog.getByLabel("URL").fill(`${receiverUrl}/events`);
      await inspect("target-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      expect(await page.getByRole("textbox", { name: "Signing key of the new target" }).inputValue()).toMatch(/^\S{20,}$/);
      await page.getByRole("rowheader", { name }).waitFor();
      await inspect("targets", tab);

      await page.getByRole("link", { name: "Executions" }).click();
      await page.getByRole("button", { name: "New execution" }).click();
      // React Aria's label takes the click for its visually hidden input, as a person's would.
      await page.getByRole("dialog").getByText("On an event").click();
      await page.getByRole("dialog").getByText(name).click();
      await expect(page.getByRole("dialog").getByRole("checkbox", { name }).isChecked()).resolves.toBe(true);
      await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
      await page.getByRole("rowheader", { name: "Events: every one" }).waitFor();
      await inspect("executions", tab);

      // An event: a user created through the API; its delivery reaches the receiver.
      await new Users(server).create(humanUser(uniqueName("evt")));
      await until("the first delivery", () => receiver.callsTo("/events").length > 0);
      await page.getByRole("link", { name: "Deliveries" }).click();
      await page.getByRole("gridcell", { name: "Delivered" }).first().waitFor();
      await inspect("deliveries", tab);
      const before = receiver.callsTo("/events").length;
      await page
        .getByRole("button", { name: /^Send again: / })
        .first()
        .click();
      await until("the delivery sent again", () => receiver.callsTo("/events").length > before);

      await page.getByRole("link", { name: "Targets" }).click();
      await page.getByRole("link", { name }).click();
      await page.getByRole("heading", { name }).waitFor();
      await page.getByLabel("Timeout (seconds)").fill("20");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      await page.getByRole("button", { name: "New signing key" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Replace" }).click();
      expect(await page.getByRole("textbox", { name: "New signing key" }).inputValue()).toMatch(/^\S{20,}$/);
      await inspect("target", tab);
      await page.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete" }).click();
      await page.getByRole("heading", { name: "Actions" }).waitFor();
      await expect.poll(() => page.getByRole("rowheader", { name }).count()).toBe(0);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("lists a message the mail server refused, in its words, and sends it again", async () => {
    // The test SMTP server refuses refused@… recipients for good (550).
    const person = uniqueName("refused");
    const recipient = `refused@${person}.example`;
    await new Users(server).create(humanUser(person, { email: { address: recipient } }));
    const messages = protocolClient(PlatformNotifications, "grpc", server.baseUrl);
    await until("the invitation to fail", async () => {
      const found = ok(await messages.call("SearchNotifications", { filters: [{ status: { status: "NOTIFICATION_STATUS_FAILED" } }] }, server.adminToken));
      return ((found.result ?? []) as { recipient: string }[]).some((n) => n.recipient === recipient);
    });
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "Messages", exact: true }).click();
      await page.getByRole("heading", { name: "Messages" }).waitFor();
      await page.getByRole("button", { name: /Status/ }).click();
      await page.getByRole("option", { name: "Failed" }).click();
      const row = page.getByRole("row").filter({ hasText: recipient });
      await row.waitFor();
      await expect(row.innerText()).resolves.toContain("550");
      await inspect("messages", tab);
      await row.getByRole("button", { name: /^Send again: / }).click();
      await expect.poll(() => row.count()).toBe(0);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
