import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIVE, DEACTIVATE, INACTIVE, INHERIT, createOrg, idpClient, instanceOwner as instanceOwnerOf, type Idps } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import { startSamlIdp, type SamlIdp } from "../support/saml-idp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { uniqueName } from "../users/helpers.js";
import { consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * Identity providers in the console (console/src/pages/IdentityProviders.tsx,
 * IdentityProvider.tsx, pages/idp/), in headless Chromium as an instance administrator uses
 * them: a GitHub provider created in the instance (read back through the API without its
 * secret), its scopes changed on its page, switched off for one organization chosen in the
 * switcher (the instance keeps it on), deleted; an OpenID Connect provider whose issuer is no
 * URL, refused under the field before anything is sent; a Microsoft Entra ID provider for one
 * tenant, and an Apple provider with its private key, its Team ID checked under the field;
 * an LDAP provider; a SAML provider from a test identity provider's metadata file (metadata
 * that is none refused by the API under the form), its SP metadata and ACS URLs on its page,
 * its binding and NameID format changed there.
 */

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`identity providers in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let idps: Idps;
  let admin: string;
  let upstream: SamlIdp;
  const org = { id: "", name: uniqueName("Agency") };

  beforeAll(async () => {
    [server, browser, upstream] = await Promise.all([startTestServer(kind), launchChromium(), startSamlIdp()]);
    idps = idpClient(server.baseUrl, server.adminToken);
    admin = await instanceOwner(server, "idps");
    org.id = await createOrg(server.baseUrl, server.adminToken, org.name);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), upstream?.close()]);
  });

  const inspect = consoleInspector(kind);

  /** Signed in as the instance's administrator, on the list of providers. */
  async function signIn(page: Page) {
    await signInToConsole(page, server, admin);
    await page.getByRole("link", { name: "Identity providers" }).click();
    await page.getByRole("heading", { name: "Identity providers" }).waitFor();
  }

  /** The create dialog with a type chosen (by its choice's first words) and its name filled in. */
  async function newDialog(page: Page, type: string, name: string) {
    await page.getByRole("button", { name: "New identity provider" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText(type).click();
    await dialog.getByLabel("Name", { exact: true }).fill(name);
    return dialog;
  }

  /** The create dialog with an OAuth type chosen and the fields every such type has filled in. */
  async function newProvider(page: Page, type: string, name: string) {
    const dialog = await newDialog(page, type, name);
    await dialog.getByLabel("Client ID").fill("Iv1.console-client");
    await dialog.getByLabel("Client secret").fill("console-s3cret");
    return dialog;
  }

  /** An organization (or all of them) chosen in the switcher as a person does: typed, then its option clicked. */
  async function choose(page: Page, option: string) {
    await page.getByRole("combobox", { name: "Organization" }).fill(option === "All organizations" ? "" : option);
    await page.getByRole("option", { name: option }).click();
  }

  it("creates a GitHub provider, changes its scopes, switches it off for one organization and deletes it", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("GitHub");
      const dialog = await newProvider(page, "GitHub: people sign in", name);
      await dialog.getByText(`${server.baseUrl}/ui/login/idp/callback`, { exact: true }).waitFor();
      await dialog.getByLabel("Scopes").fill("read:user user:email");
      await inspect("idp-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      const id = new URL(page.url()).pathname.split("/").pop()!;

      const created = await idps.ok("GetGitHubIDP", { id });
      expect(created.idp).toMatchObject({
        type: "PROVIDER_TYPE_GITHUB",
        state: ACTIVE,
        idp: { idp: { name, statePolicy: INHERIT }, config: { clientId: "Iv1.console-client", scopes: ["read:user", "user:email"] } },
      });
      expect(created.idp.details.resourceOwner).toEqual(instanceOwnerOf(server.instanceId));
      expect(created.idp.idp.config).not.toHaveProperty("clientSecret");

      const settings = page.getByRole("region", { name: "Settings" });
      await settings.getByLabel("Scopes").fill("read:user");
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await idps.ok("GetGitHubIDP", { id })).idp.idp.config.scopes).toEqual(["read:user"]);

      // Chosen in the switcher, the organization reuses the instance's provider: only its own policy changes there.
      await choose(page, org.name);
      await page.waitForURL((u) => u.searchParams.get("org") === org.id);
      const state = page.getByRole("region", { name: "State here" });
      await state.getByText("Inherited from the instance").waitFor();
      await expect(settings.getByLabel("Scopes").isDisabled()).resolves.toBe(true);
      await state.getByText("Deactivate", { exact: true }).click();
      await state.getByRole("button", { name: "Save the state policy" }).click();
      await state.getByText("Set here").waitFor();
      await page.locator(".title").getByText("Inactive").waitFor();
      const inOrg = await idps.ok("GetGitHubIDP", { id, ctx: { orgId: org.id } });
      expect(inOrg.idp).toMatchObject({
        state: INACTIVE,
        idp: { idp: { statePolicy: DEACTIVATE } },
        parent: { parent: instanceOwnerOf(server.instanceId), state: ACTIVE },
      });
      expect((await idps.ok("GetGitHubIDP", { id })).idp).toMatchObject({ state: ACTIVE, idp: { idp: { statePolicy: INHERIT } } });
      await inspect("idp", tab);
      await page.getByRole("link", { name: "Identity providers" }).click();
      await page.getByRole("row").filter({ hasText: name }).getByText("Set here").waitFor();

      // Deleted where it is defined: the instance.
      await choose(page, "All organizations");
      await page.waitForURL((u) => !u.searchParams.has("org"));
      await page.getByRole("rowheader", { name }).waitFor();
      await inspect("idps", tab);
      await page.getByRole("link", { name }).click();
      await page.getByRole("button", { name: "Delete…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete the provider" }).click();
      await page.getByRole("heading", { name: "Identity providers" }).waitFor();
      expect(await idps.call("GetIDP", { id })).toMatchObject({ ok: false, code: Code.NotFound });
      await expect.poll(() => page.getByRole("rowheader", { name }).count()).toBe(0);
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it("creates a Microsoft Entra ID provider for one tenant, its addresses counted as verified", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("Contoso");
      const dialog = await newProvider(page, "Microsoft Entra ID (Azure AD)", name);
      await dialog.getByText("The accounts of one tenant").click();
      const tenant = dialog.getByRole("textbox", { name: "Tenant" });
      await tenant.fill("not a tenant");
      await dialog.getByText("Count the email addresses Microsoft gives as verified").click();
      await dialog.getByRole("button", { name: "Create" }).click();
      await expect.poll(() => tenant.getAttribute("aria-invalid")).toBe("true");
      await tenant.fill("contoso.onmicrosoft.com");
      await inspect("idp-new-azure-ad", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      const id = new URL(page.url()).pathname.split("/").pop()!;
      const created = await idps.ok("GetAzureADIDP", { id });
      expect(created.idp).toMatchObject({
        type: "PROVIDER_TYPE_AZURE_AD",
        idp: { idp: { name }, config: { clientId: "Iv1.console-client", tenant: { tenantId: "contoso.onmicrosoft.com" }, isEmailVerified: true } },
      });
      expect(created.idp.idp.config).not.toHaveProperty("clientSecret");

      // On its page: another kind of tenant, saved without the secret (the tenant does not aim it).
      const settings = page.getByRole("region", { name: "Settings" });
      await settings.getByText("Personal Microsoft accounts only (consumers)").click();
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await idps.ok("GetAzureADIDP", { id })).idp.idp.config.tenant).toEqual({ tenantType: "AZURE_AD_TENANT_TYPE_CONSUMERS" });
      await idps.ok("DeleteIDP", { id });
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it("creates an Apple provider from its .p8 key, the Team ID checked under the field", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("Apple");
      const dialog = await newDialog(page, "Apple: people sign in", name);
      await dialog.getByLabel("Services ID").fill("com.example.console");
      const team = dialog.getByRole("textbox", { name: "Team ID" });
      await team.fill("team1");
      await dialog.getByLabel("Key ID").fill("KEY1234567");
      const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
      await dialog.getByLabel("Private key").fill(key);
      await dialog.getByRole("button", { name: "Create" }).click();
      await expect.poll(() => team.getAttribute("aria-invalid")).toBe("true");
      await dialog
        .locator(".field")
        .filter({ has: page.getByRole("textbox", { name: "Team ID" }) })
        .getByText("The Team ID has 10 capital letters and digits, such as ABCDE12345.")
        .waitFor();
      await team.fill("TEAM123456");
      await inspect("idp-new-apple", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      const id = new URL(page.url()).pathname.split("/").pop()!;
      const created = await idps.ok("GetAppleIDP", { id });
      expect(created.idp).toMatchObject({
        type: "PROVIDER_TYPE_APPLE",
        idp: { idp: { name }, config: { clientId: "com.example.console", teamId: "TEAM123456", keyId: "KEY1234567" } },
      });
      expect(JSON.stringify(created)).not.toContain(key.split("\n")[1]);

      // A new Key ID needs the key again: said under the key's field, nothing sent.
      const settings = page.getByRole("region", { name: "Settings" });
      await settings.getByLabel("Key ID").fill("KEY7654321");
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByText("Changing the Key ID needs the private key again").waitFor();
      expect((await idps.ok("GetAppleIDP", { id })).idp.idp.config.keyId).toBe("KEY1234567");
      await idps.ok("DeleteIDP", { id });
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it("creates an LDAP provider, refuses a server that is not ldap(s):// and a move of its servers without the bind password", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("Directory");
      const dialog = await newDialog(page, "LDAP: people sign in", name);
      // A directory calls no one back: no callback URL, and no client.
      expect(await dialog.getByText("/ui/login/idp/callback").count()).toBe(0);
      expect(await dialog.getByLabel("Client ID").count()).toBe(0);
      const servers = dialog.getByRole("textbox", { name: "Servers" });
      await servers.fill("https://ldap.example.com");
      await dialog.getByLabel("Base DN").fill("dc=example,dc=com");
      await dialog.getByLabel("User base").fill("ou=people");
      await dialog.getByLabel("Bind DN").fill("cn=reader,dc=example,dc=com");
      await dialog.getByLabel("Bind password").fill("console-bind-s3cret");
      await dialog.getByLabel("Timeout (seconds)").fill("2.5");
      await dialog.getByRole("button", { name: "Create" }).click();
      await expect.poll(() => servers.getAttribute("aria-invalid")).toBe("true");
      await dialog.getByText("One a line, each ldaps:// or ldap:// with a host and an optional port.").waitFor();
      await servers.fill("ldaps://ldap1.example.com\nldap://ldap2.example.com:389");
      await dialog.getByText("Upgrade ldap:// connections with StartTLS").click();
      await inspect("idp-new-ldap", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      const id = new URL(page.url()).pathname.split("/").pop()!;
      const created = await idps.ok("GetLDAPIDP", { id });
      expect(created.idp).toMatchObject({
        type: "PROVIDER_TYPE_LDAP",
        idp: {
          idp: { name },
          config: {
            servers: ["ldaps://ldap1.example.com", "ldap://ldap2.example.com:389"],
            startTls: true,
            baseDn: "dc=example,dc=com",
            bindDn: "cn=reader,dc=example,dc=com",
            userBase: "ou=people",
            userObjectClasses: ["inetOrgPerson"],
            userFilters: ["uid", "mail"],
            timeout: "2.500s",
            attributes: { idAttribute: "uid", usernameAttribute: "uid", emailAttribute: "mail", firstNameAttribute: "givenName", lastNameAttribute: "sn" },
          },
        },
      });
      expect(JSON.stringify(created)).not.toContain("console-bind-s3cret");

      // On its page: a server changed without the bind password is refused under the password's field.
      const settings = page.getByRole("region", { name: "Settings" });
      await expect(settings.getByRole("textbox", { name: "Timeout (seconds)" }).inputValue()).resolves.toBe("2.5");
      await settings.getByRole("textbox", { name: "Servers" }).fill("ldaps://ldap3.example.com");
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByText("Changing the servers needs the bind password again").waitFor();
      await settings.getByLabel("Bind password").fill("console-bind-s3cret-2");
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await idps.ok("GetLDAPIDP", { id })).idp.idp.config.servers).toEqual(["ldaps://ldap3.example.com"]);
      await inspect("idp-ldap", tab);
      await idps.ok("DeleteIDP", { id });
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it("creates a SAML provider from a metadata file, refuses metadata that is none under the form, shows its SP URLs and changes its binding and NameID format", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("SAML SSO");
      const dialog = await newDialog(page, "SAML 2.0: any identity provider", name);
      // The answer comes to the provider's own ACS, and the service makes the SP key: no callback URL, no client, no secret.
      expect(await dialog.getByText("/ui/login/idp/callback").count()).toBe(0);
      expect(await dialog.getByLabel("Client ID").count()).toBe(0);
      expect(await dialog.locator('input[type="password"]').count()).toBe(0);
      await dialog.getByText("SP metadata URL (also its entity ID) and ACS URL").waitFor();
      const metadata = dialog.getByRole("textbox", { name: "Metadata XML" });
      await metadata.fill("<x/>");
      await dialog.getByRole("button", { name: "Create" }).click();
      // XML, but no metadata: the API's refusal, under the form.
      await dialog.getByRole("alert").filter({ hasText: "metadataXml has no EntityDescriptor with an entityID" }).waitFor();

      // Loaded from the identity provider's file, as an administrator downloads it.
      const chooser = page.waitForEvent("filechooser");
      await dialog.getByRole("button", { name: "Load from an .xml file…" }).click();
      await (await chooser).setFiles({ name: "idp-metadata.xml", mimeType: "text/xml", buffer: Buffer.from(upstream.metadataXml()) });
      await expect.poll(() => metadata.inputValue()).toBe(upstream.metadataXml());
      await inspect("idp-new-saml", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name }).waitFor();
      const id = new URL(page.url()).pathname.split("/").pop()!;
      const created = await idps.ok("GetSAMLIDP", { id });
      expect(created.idp).toMatchObject({
        type: "PROVIDER_TYPE_SAML",
        idp: { idp: { name }, config: { metadataXml: upstream.metadataXml(), binding: "SAML_BINDING_POST" } },
      });
      expect(created.idp.idp.config).not.toHaveProperty("nameIdFormat");

      // What the identity provider's administrator registers: the SP metadata (its URL the entity ID) and the ACS.
      const metadataUrl = `${server.baseUrl}/idps/${id}/saml/metadata`;
      const link = page.getByRole("link", { name: metadataUrl });
      await expect(link.getAttribute("href")).resolves.toBe(metadataUrl);
      await page.getByText(`${server.baseUrl}/idps/${id}/saml/acs`, { exact: true }).waitFor();
      await page.getByRole("button", { name: "Copy the ACS URL" }).waitFor();
      expect(await page.getByText("/ui/login/idp/callback").count()).toBe(0);
      const sp = await fetch(metadataUrl);
      expect(sp.status).toBe(200);
      expect(await sp.text()).toContain(`entityID="${metadataUrl}"`);

      // On its page: the transient format asks for the attribute that identifies the person.
      const settings = page.getByRole("region", { name: "Settings" });
      await expect(settings.getByRole("textbox", { name: "Metadata XML" }).inputValue()).resolves.toBe(upstream.metadataXml());
      await settings.getByText("HTTP-Redirect: the request travels").click();
      expect(await settings.getByLabel("Mapping attribute").count()).toBe(0);
      await settings.getByText("Transient: a new ID at every sign-in").click();
      const mapping = settings.getByRole("textbox", { name: "Mapping attribute" });
      await expect(mapping.getAttribute("aria-required")).resolves.toBe("true");
      await settings.getByRole("button", { name: "Save" }).click();
      await expect.poll(() => mapping.getAttribute("aria-invalid")).toBe("true");
      await settings.getByText("Give the attribute of the assertion that identifies the person for good").waitFor();
      expect((await idps.ok("GetSAMLIDP", { id })).idp.idp.config).not.toHaveProperty("nameIdFormat");
      await mapping.fill("employeeNumber");
      await settings.getByRole("button", { name: "Save" }).click();
      await settings.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await idps.ok("GetSAMLIDP", { id })).idp.idp.config).toEqual({
        metadataXml: upstream.metadataXml(),
        binding: "SAML_BINDING_REDIRECT",
        nameIdFormat: "SAML_NAME_ID_FORMAT_TRANSIENT",
        transientMappingAttributeName: "employeeNumber",
      });
      await inspect("idp-saml", tab);
      await idps.ok("DeleteIDP", { id });
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it("refuses an OpenID Connect provider whose issuer is no URL, under the field", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signIn(page);
      const name = uniqueName("Corporate SSO");
      const dialog = await newProvider(page, "OpenID Connect: any provider", name);
      await dialog.getByLabel("Issuer").fill("login.example.com");
      await dialog.getByRole("button", { name: "Create" }).click();
      const issuer = dialog.getByRole("textbox", { name: "Issuer" });
      await expect.poll(() => issuer.getAttribute("aria-invalid")).toBe("true");
      await dialog
        .locator(".field")
        .filter({ has: page.getByRole("textbox", { name: "Issuer" }) })
        .getByText("An absolute http or https URL, such as https://login.example.com.")
        .waitFor();
      const found = await idps.ok("SearchIDPs", { filters: [{ name: { name, method: "TEXT_FILTER_METHOD_EQUALS" } }] });
      expect(found.result ?? []).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);
});
