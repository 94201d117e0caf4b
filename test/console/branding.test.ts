import type { JsonObject } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { PlatformMessageTextSettings } from "../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ok, uniqueName } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner } from "./helpers.js";

/*
 * The branding and message texts settings in the console (console/src/pages/settings/), in
 * headless Chromium: a color changed and seen in the live preview before it is saved, then
 * through the API and on the real login page; a logo uploaded and served; an organization
 * inheriting the instance's values, overriding one and resetting it; an invitation's subject
 * refused with a wrong placeholder, changed for an organization and reset.
 */

const en = TEXTS.en;
/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const GREEN = { hex: "#0b6e4f", rgb: "rgb(11, 110, 79)" };

// The browser's globals in functions page.evaluate runs (this program's types leave out the DOM).
declare const document: { querySelector(selector: string): unknown };
declare function getComputedStyle(element: unknown): { backgroundColor: string };

const buttonColor = (frame: Page | Frame) => frame.evaluate(() => getComputedStyle(document.querySelector("button")).backgroundColor);

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`branding and message texts in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;
  let org: { id: string; name: string };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind), launchChromium()]);
    admin = await instanceOwner(server, "brand");
    const name = uniqueName("Branded");
    const created = ok(
      await protocolClient(PlatformOrganizations, "grpc", server.baseUrl).call("CreateOrganization", { organization: { name } }, server.adminToken),
    );
    org = { id: String(created.details.id), name };
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);
  const branding = (ctx?: JsonObject) =>
    protocolClient(PlatformBrandingSettings, "grpc", server.baseUrl)
      .call("ResolveBrandingSettings", { ...(ctx && { ctx }) }, server.adminToken)
      .then((r) => ok(r).settings);

  async function signIn(page: Page, path: string) {
    await page.goto(`${server.baseUrl}/ui/console/${path}`);
    await page.getByLabel(en.loginName).fill(admin);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(CONSOLE_PASSWORD);
    await page.getByRole("button", { name: en.signIn }).click();
  }

  it("previews a color before it is saved, saves it for the login pages, uploads a logo; an organization inherits, overrides and resets", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page, "settings/branding");
      await page.getByRole("heading", { name: "Branding" }).waitFor();
      const light = page.getByRole("group", { name: "Light mode" });
      const primary = light.getByLabel("Primary", { exact: true });
      await expect(primary.inputValue()).resolves.toBe("#5469d4");
      await expect(page.getByText("Default of the system").count()).resolves.toBeGreaterThan(0);

      // The preview draws the unsaved color; nothing is stored yet.
      const preview = (await page.getByTitle("Preview of the sign-in page").elementHandle())!;
      const frame = (await preview.contentFrame())!;
      await expect.poll(() => frame.evaluate(() => (document.querySelector("h1") as { textContent: string } | null)?.textContent)).toBe(en.signInTitle);
      await primary.fill(GREEN.hex.toUpperCase());
      await expect.poll(() => buttonColor(frame)).toBe(GREEN.rgb);
      await expect(branding()).resolves.toMatchObject({ primaryColor: { value: "#5469d4" } });
      // Dark mode on demand, whatever the system prefers: the built-in dark primary.
      const shown = page.getByRole("region", { name: "Preview" });
      await shown.getByText("Dark mode").click();
      await expect.poll(() => buttonColor(frame)).toBe("rgb(74, 144, 226)");
      await shown.getByText("Light mode").click();
      await expect.poll(() => buttonColor(frame)).toBe(GREEN.rgb);

      // A color that is no color yet: named at the field, refused before anything is sent.
      const text = light.getByLabel("Text", { exact: true });
      await text.fill("#12");
      await page.getByRole("button", { name: "Save" }).click();
      await light.getByText("A color as #rrggbb, such as #5469d4.").waitFor();
      await text.fill("#000000");

      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      const saved = await branding();
      expect(saved.primaryColor).toEqual({ value: GREEN.hex });
      expect(saved.fontColor.owner).toMatchObject({ type: "OWNER_TYPE_SYSTEM" });

      // The real login page: its primary button in the saved color.
      const visitor = await openTab(browser);
      try {
        await visitor.page.goto(`${server.baseUrl}/ui/console/`);
        await visitor.page.getByRole("button", { name: en.next }).waitFor();
        await expect(buttonColor(visitor.page)).resolves.toBe(GREEN.rgb);
      } finally {
        await visitor.page.context().close();
      }

      // A file the API would refuse is named before it is sent; a PNG is uploaded and served.
      const upload = async (name: string, mimeType: string, buffer: Buffer) => {
        const chooser = page.waitForEvent("filechooser");
        await page.getByRole("button", { name: "Upload logo…" }).click();
        await (await chooser).setFiles({ name, mimeType, buffer });
      };
      await upload("logo.gif", "image/gif", Buffer.from("GIF89a"));
      await page.getByRole("alert").filter({ hasText: "logo.gif is of type image/gif: choose a PNG, JPEG, WebP or SVG image." }).waitFor();
      await upload("logo.png", "image/png", PNG);
      const logo = page.getByRole("img", { name: "Logo in effect" });
      await logo.waitFor();
      const src = (await logo.getAttribute("src"))!;
      expect((await branding()).logoUrl).toEqual({ value: src });
      const served = await fetch(`${server.baseUrl}${src}`);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
      await page.getByRole("button", { name: "Reset logo" }).waitFor();
      await inspect("branding", tab);

      // An organization: everything inherited from the instance (the logo too), one color its own, then reset.
      await page.getByRole("combobox", { name: "Organization" }).fill(org.name);
      await page.getByRole("option", { name: org.name }).click();
      await page.waitForURL((u) => u.searchParams.get("org") === org.id);
      await expect.poll(() => page.getByText("Inherited from the instance").count()).toBe(2);
      await expect(primary.inputValue()).resolves.toBe(GREEN.hex);
      await expect(logo.getAttribute("src")).resolves.toBe(src);
      await expect(page.getByText("Set here").count()).resolves.toBe(0);

      const background = light.getByLabel("Background", { exact: true });
      await background.fill("#fdf6e3");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      const own = await branding({ orgId: org.id });
      expect(own.backgroundColor).toEqual({ value: "#fdf6e3" });
      expect(own.primaryColor).toEqual({ value: GREEN.hex, owner: { type: "OWNER_TYPE_INSTANCE", id: server.instanceId } });

      await page.getByRole("button", { name: "Reset background color (light mode)" }).click();
      await expect.poll(() => background.inputValue()).toBe("#fafafa");
      await expect((await branding({ orgId: org.id })).backgroundColor).toMatchObject({ value: "#fafafa", owner: { type: "OWNER_TYPE_SYSTEM" } });
      await expect(page.getByText("Set here").count()).resolves.toBe(0);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("changes an invitation's subject for an organization in English, refuses a wrong placeholder, resets it", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    const texts = () =>
      protocolClient(PlatformMessageTextSettings, "grpc", server.baseUrl)
        .call("ResolveMessageText", { kind: "invite", language: "en", ctx: { orgId: org.id } }, server.adminToken)
        .then((r) => ok(r));
    try {
      await signIn(page, `settings/texts?org=${org.id}`);
      await page.getByRole("heading", { name: "Message texts" }).waitFor();
      await page.getByRole("button", { name: /Message$/ }).press("Enter");
      await page.getByRole("option", { name: "Invitation", exact: true }).press("Enter");
      await expect(page.getByRole("button", { name: /Language$/ }).innerText()).resolves.toContain("English (en)");
      const subject = page.getByLabel("Subject", { exact: true });
      const builtIn = (await texts()).settings.subject.value as string;
      await expect.poll(() => subject.inputValue()).toBe(builtIn);
      await page.getByRole("listitem").filter({ hasText: "{{.URL}}" }).waitFor();

      // The API's refusal, next to the form that caused it.
      await subject.fill("Your code {{.Code}}");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("alert").filter({ hasText: "{{.Code}} is no placeholder of invite messages" }).waitFor();

      await subject.fill("Welcome to {{.OrgName}}, {{.DisplayName}}");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      const changed = await texts();
      expect(changed.settings.subject).toEqual({ value: "Welcome to {{.OrgName}}, {{.DisplayName}}" });
      expect(changed.settings.body.owner).toMatchObject({ type: "OWNER_TYPE_SYSTEM" });
      await inspect("message-texts", tab);

      await page.getByRole("button", { name: "Reset the subject of the invitation" }).click();
      await expect.poll(() => subject.inputValue()).toBe(builtIn);
      expect((await texts()).settings.subject).toMatchObject({ value: builtIn, owner: { type: "OWNER_TYPE_SYSTEM" } });
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
