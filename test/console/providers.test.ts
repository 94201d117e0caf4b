import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSMSProviders } from "../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { testCertificates, TestSmtpServer } from "../notification-providers/fakes.js";
import { PASSWORD } from "../notification-providers/requests.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Receiver } from "../support/target-receiver.js";
import { until } from "../support/until.js";
import { uniqueName } from "../users/helpers.js";
import { consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * The instance's email and SMS providers in the console (console/src/pages/messages/), in
 * headless Chromium: an SMTP provider made in the console against a real SMTP server (STARTTLS
 * with a private CA, AUTH), a test email it delivers, activated (the API's active one), then
 * a wrong password saved and the server's refusal shown in its words; an SMS provider of the
 * endpoint kind (its signing key shown once) whose test reaches a local receiver, deleted.
 */

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`email and SMS providers in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let smtp: TestSmtpServer;
  let smtpPort: number;
  let receiver: Receiver;
  let receiverUrl: string;
  let certificatesDir: string;
  let admin: string;

  beforeAll(async () => {
    certificatesDir = await mkdtemp(join(tmpdir(), "console-providers-"));
    const certificates = await testCertificates(certificatesDir);
    smtp = new TestSmtpServer({ certificates, users: { mailer: PASSWORD } });
    receiver = new Receiver();
    [smtpPort, receiverUrl] = await Promise.all([smtp.start(), receiver.start()]);
    // The SMTP server and the receiver are on 127.0.0.1, and the server's certificate is of the test CA.
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_SMTP_CA_PATH: certificates.caPath }),
      launchChromium(),
    ]);
    // A verified address: no message of the owner's own goes through the provider made here.
    admin = await instanceOwner(server, "mail", { email: { address: `${uniqueName("mail")}@mail.example`, isVerified: true } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    receiver?.close();
    await smtp?.close();
    await rm(certificatesDir, { recursive: true, force: true });
  });

  const inspect = consoleInspector(kind);

  it("an SMTP provider: created, a test email delivered, activated; a wrong password refused by the server in its words", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "Messages", exact: true }).click();
      await page.getByRole("link", { name: "Email providers" }).click();
      await page.getByRole("heading", { name: "Messages" }).waitFor();
      await page.getByText("No email providers yet.").waitFor();

      const description = uniqueName("relay");
      await page.getByRole("button", { name: "New email provider" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Description", { exact: true }).fill(description);
      await dialog.getByLabel("Host", { exact: true }).fill("smtp server.example");
      await dialog.getByLabel("Port", { exact: true }).fill(String(smtpPort));
      await dialog.getByLabel("User", { exact: true }).fill("mailer");
      await dialog.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await dialog.getByLabel("From address", { exact: true }).fill("noreply@platform.example");
      await dialog.getByRole("button", { name: "Create" }).click();
      // What the API would refuse is refused under its field, before any request.
      await dialog.getByText("A host name or IP address.").waitFor();
      await expect(dialog.getByLabel("Host", { exact: true }).getAttribute("aria-invalid")).resolves.toBe("true");
      await dialog.getByLabel("Host", { exact: true }).fill("localhost");
      await dialog.getByLabel("From name", { exact: true }).fill("Platform");
      await inspect("smtp-provider-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: description }) });
      await row.waitFor();
      await expect(row.innerText()).resolves.toMatch(new RegExp(`SMTP\\s+localhost:${smtpPort}\\s+Inactive`));
      await inspect("smtp-providers", tab);

      await row.getByRole("link", { name: description }).click();
      await page.getByRole("heading", { name: description }).waitFor();
      await page.getByLabel("Email address", { exact: true }).fill("test-receiver@mail.example");
      await page.getByRole("button", { name: "Send a test" }).click();
      await page.getByRole("status").filter({ hasText: "The provider took the test for test-receiver@mail.example." }).waitFor();
      const delivered = smtp.delivered.find((d) => d.to[0] === "test-receiver@mail.example");
      expect(delivered).toMatchObject({ from: "noreply@platform.example", user: "mailer", secure: true });
      expect(delivered!.mail.from?.value).toEqual([{ address: "noreply@platform.example", name: "Platform" }]);

      await page.getByRole("button", { name: "Activate" }).click();
      await page.getByRole("button", { name: "Deactivate" }).waitFor();
      await inspect("smtp-provider", tab);
      const api = protocolClient(PlatformSMTPProviders, "grpc", server.baseUrl);
      const active = okMessage(await api.call("SearchSMTPProviders", { filters: [{ state: { state: "EFFECTIVE_STATE_ACTIVE" } }] }, server.adminToken));
      expect(active.result.map((p: { description: string }) => p.description)).toEqual([description]);
      expect(active.result[0].smtp).toMatchObject({
        host: "localhost",
        port: smtpPort,
        tls: "SMTP_TLS_STARTTLS",
        user: "mailer",
        passwordSet: true,
        senderAddress: "noreply@platform.example",
      });

      await page.getByLabel("Password", { exact: true }).fill("not-the-password");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      await page.getByRole("button", { name: "Send a test" }).click();
      await expect(page.getByRole("alert").innerText()).resolves.toMatch(/535\b.*Invalid username or password/);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("an SMS provider of the endpoint kind: created with its signing key shown once, a test message received, deleted", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "Messages", exact: true }).click();
      await page.getByRole("link", { name: "SMS providers" }).click();
      const description = uniqueName("sms-hook");
      await page.getByRole("button", { name: "New SMS provider" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Description", { exact: true }).fill(description);
      // React Aria's label takes the click for its visually hidden input, as a person's would.
      await dialog.getByText("An endpoint of yours").click();
      await dialog.getByLabel("Endpoint URL", { exact: true }).fill(`${receiverUrl}/sms`);
      await dialog.getByRole("button", { name: "Create" }).click();
      expect(await page.getByRole("textbox", { name: "Signing key of the new SMS provider" }).inputValue()).toMatch(/^[A-Za-z0-9]{36}$/);
      await page.getByRole("rowheader", { name: description }).waitFor();
      await inspect("sms-providers", tab);

      await page.getByRole("link", { name: description }).click();
      await page.getByRole("heading", { name: description }).waitFor();
      await page.getByLabel("Phone number", { exact: true }).fill("0791234567");
      await page.getByRole("button", { name: "Send a test" }).click();
      await page.getByText("A number in E.164 format").first().waitFor();
      await page.getByLabel("Phone number", { exact: true }).fill("+41791234567");
      await page.getByRole("button", { name: "Send a test" }).click();
      await page.getByRole("status").filter({ hasText: "The provider took the test for +41791234567." }).waitFor();
      const [received] = receiver.callsTo("/sms");
      expect(received!.body).toMatchObject({ instanceId: server.instanceId, channel: "sms", to: "+41791234567" });

      // A key signs for one URL: saving a new one shows its new key once, and the next test goes there.
      await page.getByLabel("Endpoint URL", { exact: true }).fill(`${receiverUrl}/sms-moved`);
      await page.getByRole("button", { name: "Save" }).click();
      expect(await page.getByRole("textbox", { name: "Signing key of the endpoint" }).inputValue()).toMatch(/^[A-Za-z0-9]{36}$/);
      await page.getByRole("button", { name: "Send a test" }).click();
      await until("the test at the new URL", () => receiver.callsTo("/sms-moved").length === 1);
      await inspect("sms-provider", tab);

      const id = new URL(page.url()).pathname.split("/").pop()!;
      await page.getByRole("button", { name: "Delete…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete the provider" }).click();
      await page.getByRole("searchbox", { name: "Find SMS providers by description" }).waitFor();
      await until("the list without the provider", async () => (await page.getByRole("rowheader", { name: description }).count()) === 0);
      const gone = await protocolClient(PlatformSMSProviders, "grpc", server.baseUrl).call("GetSMSProvider", { id }, server.adminToken);
      expect(gone).toMatchObject({ ok: false, code: Code.NotFound });
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
