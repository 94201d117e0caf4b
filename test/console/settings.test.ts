import type { JsonObject } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformDomainSettings } from "../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { PlatformFeatureSettings } from "../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { PlatformLanguageSettings } from "../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, ok, uniqueName, Users, type Msg } from "../users/helpers.js";
import { consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * The settings in the console (console/src/pages/settings), in headless Chromium as an
 * instance owner uses them: login settings and the lockout changed in the instance (what was
 * changed back is not saved), seen inherited in an organization, overridden there and reset;
 * the instance's password rules holding for a user created through the API; languages, the
 * domain rule and a feature flag.
 * Every change is read back through the API, not only from the page.
 */

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`settings in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;
  const org = { id: "", name: uniqueName("Branch") };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind), launchChromium()]);
    admin = await instanceOwner(server, "settings");
    org.id = ok(
      await protocolClient(PlatformOrganizations, "grpc", server.baseUrl).call("CreateOrganization", { organization: { name: org.name } }, server.adminToken),
    ).details.id;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);

  /** A settings service's resolved settings in a context (the instance's when none is given). */
  async function resolved(service: Parameters<typeof protocolClient>[0], method: string, ctx?: JsonObject): Promise<Msg> {
    return ok(await protocolClient(service, "grpc", server.baseUrl).call(method, ctx ? { ctx } : {}, server.adminToken)).settings;
  }
  const login = (ctx?: JsonObject) => resolved(PlatformLoginSettings, "ResolveLoginSettings", ctx);

  async function signedIn(): Promise<Tab> {
    const tab = await openTab(browser);
    const { page } = tab;
    await signInToConsole(page, server, admin);
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Login", exact: true }).waitFor();
    return tab;
  }

  /** An option of a select field (React Aria's Select: a button named by its value and label). */
  async function choose(page: Page, label: string, option: string) {
    await page.getByRole("button", { name: new RegExp(`${label}$`) }).click();
    await page.getByRole("option", { name: option, exact: true }).click();
    // Until the list has closed, its underlay takes the next click (which would only close it).
    await page.getByRole("listbox").waitFor({ state: "hidden" });
  }

  /** Saves the form of one section and waits for its "Saved". */
  async function save(page: Page, section: string) {
    const region = page.getByRole("region", { name: section });
    await region.getByRole("button", { name: "Save" }).click();
    await region.getByRole("status").filter({ hasText: "Saved" }).waitFor();
  }

  const textbox = (page: Page, label: string) => page.getByRole("textbox", { name: label, exact: true });

  /** Where the page says a setting's value comes from: the line after its input. */
  const origin = (page: Page, input: string) =>
    page
      .locator(".setting")
      .filter({ has: textbox(page, input) })
      .locator(".inherited")
      .first();

  it("login settings and the lockout in the instance, inherited by an organization, overridden there and reset; password rules hold", async () => {
    const tab = await signedIn();
    const { page } = tab;
    try {
      const passwordLifetime = "A checked password counts for";
      await expect(textbox(page, passwordLifetime).inputValue()).resolves.toBe("240");
      await expect(origin(page, passwordLifetime).innerText()).resolves.toBe("Default of the system");
      await textbox(page, passwordLifetime).fill("90");
      await choose(page, `${passwordLifetime}: unit`, "minutes");
      // Changed and changed back: the box as before, the factor ticked last instead of first.
      for (const label of ["People may register themselves", "Authenticator app (TOTP)"]) {
        await page.getByText(label, { exact: true }).click();
        await page.getByText(label, { exact: true }).click();
      }
      await inspect("settings-login", tab);
      await save(page, "Login settings");
      await expect(origin(page, passwordLifetime).innerText()).resolves.toMatch(/^Set here/);
      const instanceLogin = await login();
      expect(instanceLogin.passwordCheckLifetime).toEqual({ value: "5400s" });
      // Only what differs from the value in effect is set: the rest stays the system's.
      expect(instanceLogin.externalLoginCheckLifetime).toEqual({ value: "864000s", owner: { type: "OWNER_TYPE_SYSTEM" } });
      expect(instanceLogin.allowRegister.owner).toEqual({ type: "OWNER_TYPE_SYSTEM" });
      expect(instanceLogin.secondFactors.owner).toEqual({ type: "OWNER_TYPE_SYSTEM" });

      // Beyond the API's bound: refused on the page, nothing sent.
      await textbox(page, passwordLifetime).fill("8761");
      await choose(page, `${passwordLifetime}: unit`, "hours");
      await page.getByRole("region", { name: "Login settings" }).getByRole("button", { name: "Save" }).click();
      await page.getByText("At most 8760 hours.").waitFor();
      expect((await login()).passwordCheckLifetime).toEqual({ value: "5400s" });

      await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Lockout and passwords" }).click();
      await page.getByRole("heading", { name: "Lockout and passwords" }).waitFor();
      const attempts = "Lock a user after this many wrong passwords in a row";
      await textbox(page, attempts).fill("3");
      await save(page, "Lockout");
      expect((await login()).maxPasswordAttempts).toEqual({ value: 3 });

      // The instance's password rules: a shorter password is refused through the API.
      await page.getByLabel("Minimum length (characters)").fill("14");
      await save(page, "Password rules");
      await inspect("settings-security", tab);
      const users = new Users(server);
      const refused = await users.call("CreateUser", { user: humanUser(uniqueName("short"), { password: "Sh0rt-Pass!" }) });
      expect(refused.ok, JSON.stringify(refused)).toBe(false);
      ok(await users.call("CreateUser", { user: humanUser(uniqueName("long"), { password: "Long-enough-Pa55w0rd!" }) }));

      // In an organization: the instance's values, inherited; the password rules are not its own.
      await page.getByRole("combobox", { name: "Organization" }).fill(org.name);
      await page.getByRole("option", { name: org.name }).click();
      await page.waitForURL((u) => u.searchParams.get("org") === org.id);
      await expect.poll(() => origin(page, attempts).innerText()).toBe("Inherited from the instance");
      await expect(textbox(page, attempts).inputValue()).resolves.toBe("3");
      await page.getByText("Password rules hold for the whole instance, not per organization.").waitFor();
      await textbox(page, attempts).fill("5");
      await save(page, "Lockout");
      await expect.poll(() => origin(page, attempts).innerText()).toMatch(/^Set here/);
      const orgCtx = { orgId: org.id };
      expect((await login(orgCtx)).maxPasswordAttempts).toEqual({ value: 5 });
      expect((await login()).maxPasswordAttempts).toEqual({ value: 3 });
      await inspect("settings-security-organization", tab);
      await page.getByRole("button", { name: "Reset lockout" }).click();
      await expect.poll(() => origin(page, attempts).innerText()).toBe("Inherited from the instance");
      await expect(textbox(page, attempts).inputValue()).resolves.toBe("3");
      expect((await login(orgCtx)).maxPasswordAttempts).toEqual({ value: 3, owner: { type: "OWNER_TYPE_INSTANCE", id: server.instanceId } });

      // The login page in the organization: its lifetime inherited, the login UI the instance's alone.
      await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Login" }).click();
      await expect.poll(() => origin(page, passwordLifetime).innerText()).toBe("Inherited from the instance");
      await expect(page.getByLabel("Login UI URL").isDisabled()).resolves.toBe(true);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("languages offered and the default; the domain rule; a feature flag", async () => {
    const tab = await signedIn();
    const { page } = tab;
    try {
      const settings = page.getByRole("navigation", { name: "Settings" });
      await settings.getByRole("link", { name: "Languages" }).click();
      await page.getByRole("heading", { name: "Languages" }).waitFor();
      // No restriction yet: every supported language is offered.
      const offered = page.getByRole("group", { name: "Offered languages" });
      await expect(offered.getByRole("checkbox", { checked: false }).count()).resolves.toBe(0);
      for (const box of await offered.getByRole("checkbox").all()) {
        const name = (await box.getAttribute("value"))!;
        if (name !== "en" && name !== "de") await offered.getByText(`(${name})`).click();
      }
      await choose(page, "Default language", "French (fr)");
      await page.getByRole("region", { name: "Language settings" }).getByRole("button", { name: "Save" }).click();
      await page.getByText("The default language must be one of the offered languages.").waitFor();
      await choose(page, "Default language", "German (de)");
      await save(page, "Language settings");
      const languages = await resolved(PlatformLanguageSettings, "ResolveLanguages");
      expect(languages.defaultLanguage).toEqual({ value: "de" });
      expect(languages.restrictedLanguages).toEqual({ value: [{ key: "en" }, { key: "de" }] });
      await inspect("settings-languages", tab);

      await settings.getByRole("link", { name: "Domain" }).click();
      const verify = page.getByText(/^Organizations must verify a domain/);
      await verify.click();
      await save(page, "Domain settings");
      expect((await resolved(PlatformDomainSettings, "ResolveDomainSettings")).validateOrgDomains).toEqual({ value: true });
      await inspect("settings-domain", tab);

      await settings.getByRole("link", { name: "Features" }).click();
      await page.getByText(/^Token exchange/).click();
      await save(page, "Feature flags");
      expect((await resolved(PlatformFeatureSettings, "ResolveFeatures")).tokenExchange).toEqual({ value: true });
      await inspect("settings-features", tab);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
