import { existsSync } from "node:fs";
import * as client from "openid-client";
import type { Browser, Locator, Page } from "playwright-core";
import { consoleInspector } from "./helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { appClient, createProject, oidc, projectClient } from "../apps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab, type Tab } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { humanUser, ok, uniqueName, Users } from "../users/helpers.js";

/*
 * The console's projects and applications (console/src/pages/Project*.tsx, Application.tsx)
 * in headless Chromium, as an instance owner uses them: a project with a role; an OpenID
 * Connect application whose secret, shown once and copied from the page, gets a token by the
 * code flow in the same browser (single sign-on); its settings, a new secret, its state and
 * deletion; an API's keys; user grants; the project's settings, state and deletion; the
 * console's own application, which the service refuses to change, in the API's words; and a
 * viewer, who sees all of it and can change none. The pages are checked as
 * test/console/console.test.ts checks them.
 */

const PASSWORD = "Console-Pa55word!";
const REDIRECT = "https://rp.example/cb";
const en = TEXTS.en;

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`the console's projects and applications on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  const owner = { id: "", loginName: "" };
  const viewer = { id: "", loginName: "" };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "1000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "1000" }),
      launchChromium(),
    ]);
    const users = new Users(server);
    const memberships = protocolClient(PlatformMemberships, "grpc", server.baseUrl);
    for (const [person, role] of [
      [owner, "IAM_OWNER"],
      [viewer, "IAM_OWNER_VIEWER"],
    ] as const) {
      person.id = await users.create(humanUser(uniqueName(role.toLowerCase().replaceAll("_", "")), { password: PASSWORD }));
      person.loginName = (await users.get(person.id)).loginName as string;
      ok(await memberships.call("CreateMembership", { membership: { userId: person.id, roles: [role] } }, server.adminToken));
    }
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);

  /** A tab of its own, signed in to the console (as the owner unless told), on `path`. */
  async function signedIn(path: string, as = owner): Promise<Tab> {
    const tab = await openTab(browser);
    const { page } = tab;
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.baseUrl });
    await page.goto(`${server.baseUrl}/ui/console${path}`);
    await page.getByLabel(en.loginName).fill(as.loginName);
    await page.getByRole("button", { name: en.next }).click();
    await page.getByLabel(en.password).fill(PASSWORD);
    await page.getByRole("button", { name: en.signIn }).click();
    await page.waitForURL((u) => u.pathname === `/ui/console${path}`);
    return tab;
  }

  /**
   * The code flow of a confidential client in the browser that signed in to the console (so
   * the service signs the person in at once): the relying party's page (routed; a link there
   * is followed as a person would: a redirect of page.goto's own navigation escapes routing),
   * the callback it gets, and the code exchanged for tokens with the client's secret.
   */
  async function codeFlow(page: Page, clientId: string, secret: string) {
    const config = await client.discovery(new URL(server.baseUrl), clientId, secret, client.ClientSecretBasic(secret), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: "openid",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: "console",
    });
    const rp = await page.context().newPage();
    let callback: URL | undefined;
    await rp.route("https://rp.example/**", async (route) => {
      const at = new URL(route.request().url());
      if (at.pathname === "/")
        return route.fulfill({
          status: 200,
          contentType: "text/html",
          body: `<!doctype html><title>RP</title><a href="${url.href.replaceAll("&", "&amp;")}">Sign in</a>`,
        });
      callback = at;
      return route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
    });
    try {
      await rp.goto("https://rp.example/");
      await rp.getByRole("link", { name: "Sign in" }).click();
      await rp.waitForURL((u) => u.href.startsWith(REDIRECT));
      return await client.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: "console" });
    } finally {
      await rp.close();
    }
  }

  /** A check box or radio button ticked as a person at the keyboard does: focused, then Space. */
  async function tick(box: Locator) {
    await box.focus();
    await box.page().keyboard.press("Space");
    await expect(box.isChecked()).resolves.toBe(true);
  }

  /** The page's Deactivate, then its Reactivate: the state shown changes each time. */
  async function deactivateAndReactivate(page: Page) {
    await page.getByRole("button", { name: "Deactivate" }).click();
    await page.getByText("Inactive", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Reactivate" }).click();
    await page.getByRole("button", { name: "Deactivate" }).waitFor();
  }

  it("a project with a role; an OpenID Connect application whose secret, shown once, gets a token; its settings, a new secret, its state, deleting it; removing the role", async () => {
    const tab = await signedIn("/");
    const { page } = tab;
    try {
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Projects" }).click();
      await page.getByRole("heading", { name: "Projects" }).waitFor();
      await page.getByRole("rowheader", { name: "Platform" }).waitFor();
      await inspect("projects", tab);

      const name = uniqueName("Shop");
      await page.getByRole("button", { name: "New project" }).click();
      await page.getByRole("dialog").getByLabel("Name").fill(name);
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name, level: 1 }).waitFor();

      const roles = page.getByRole("form", { name: "Add a role" });
      await roles.getByLabel("Key").fill("reader");
      await roles.getByLabel("Display name").fill("Reader");
      await roles.getByLabel("Group").fill("Docs");
      await roles.getByRole("button", { name: "Add role" }).click();
      const role = page.getByRole("row", { name: "reader" });
      await role.waitFor();
      expect(await role.innerText()).toMatch(/Reader\s+Docs/);
      await inspect("project", tab);

      await page.getByRole("button", { name: "New application" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill("Web shop");
      // The defaults of a web application: a secret in the Authorization header, the code flow.
      await expect(dialog.getByRole("radio", { name: /^Web/ }).isChecked()).resolves.toBe(true);
      await expect(dialog.getByRole("radio", { name: /client_secret_basic/ }).isChecked()).resolves.toBe(true);
      await expect(dialog.getByRole("checkbox", { name: "Code", exact: true }).isChecked()).resolves.toBe(true);
      // A browser application's: public, with PKCE; and back.
      await tick(dialog.getByRole("radio", { name: /^User agent/ }));
      await expect(dialog.getByRole("radio", { name: /\(none\)/ }).isChecked()).resolves.toBe(true);
      await tick(dialog.getByRole("radio", { name: /^Web/ }));
      await expect(dialog.getByRole("radio", { name: /client_secret_basic/ }).isChecked()).resolves.toBe(true);
      await dialog.getByLabel("Redirect URIs", { exact: true }).fill(REDIRECT);
      await tick(dialog.getByRole("checkbox", { name: "Refresh token" }));
      await inspect("application-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByRole("heading", { name: "Application created" }).waitFor();
      const clientId = await dialog.locator("dd code").innerText();
      const secret = await dialog.getByRole("textbox", { name: "Client secret" }).inputValue();
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await dialog.getByRole("button", { name: "Copy the client secret" }).click();
      await dialog.getByRole("status").filter({ hasText: "Copied" }).waitFor();
      const copied = await page.evaluate<string>("navigator.clipboard.readText()");
      expect(copied).toBe(secret);
      await inspect("application-created", tab);

      // The copied secret, in the code flow of the browser that signed in to the console: no second sign-in.
      const tokens = await codeFlow(page, clientId, copied);
      expect(tokens.access_token).toBeTruthy();
      expect(tokens.claims()?.sub).toBe(owner.id);

      await dialog.getByRole("link", { name: "Open the application" }).click();
      await page.getByRole("heading", { name: "Web shop", level: 1 }).waitFor();
      await expect(page.getByRole("main").getByText(clientId).first().isVisible()).resolves.toBe(true);
      await expect(page.getByRole("checkbox", { name: "Refresh token" }).isChecked()).resolves.toBe(true);
      await inspect("application", tab);

      await page.getByLabel("Post-logout redirect URIs").fill("https://rp.example/bye");
      await tick(page.getByRole("radio", { name: /^JWT/ }));
      await tick(page.getByRole("checkbox", { name: /Access tokens \(JWT\) carry/ }));
      await page.getByLabel("Clock skew (seconds)").fill("2");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      await page.reload();
      await expect(page.getByLabel("Clock skew (seconds)").inputValue()).resolves.toBe("2");
      await expect(page.getByLabel("Post-logout redirect URIs").inputValue()).resolves.toBe("https://rp.example/bye");
      await expect(page.getByRole("radio", { name: /^JWT/ }).isChecked()).resolves.toBe(true);
      await expect(page.getByRole("checkbox", { name: /Access tokens \(JWT\) carry/ }).isChecked()).resolves.toBe(true);

      await page.getByRole("button", { name: "New client secret…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Replace the secret" }).click();
      const replaced = await page.getByRole("textbox", { name: "New client secret" }).inputValue();
      expect(replaced).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(replaced).not.toBe(secret);

      await deactivateAndReactivate(page);

      await page.getByRole("button", { name: "Delete…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete the application" }).click();
      await page.getByRole("heading", { name, level: 1 }).waitFor();
      await page.getByText("No applications yet.").waitFor();
      await page.getByRole("button", { name: "Remove the role reader" }).click();
      await page.getByText("No roles yet.").waitFor();
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("an API's keys, user grants, a project's settings, state and deletion; the console's own application refused", async () => {
    const name = uniqueName("Backend");
    const projectId = await createProject(server.baseUrl, server.adminToken, name);
    await projectClient(server.baseUrl, server.adminToken).ok("AddProjectRole", { projectId, role: { key: "editor", displayName: "Editor" } });
    const tab = await signedIn(`/projects/${projectId}`);
    const { page } = tab;
    try {
      await page.getByRole("heading", { name, level: 1 }).waitFor();

      const grants = page.getByRole("form", { name: "Grant roles" });
      await grants.getByLabel("User").fill(owner.loginName);
      await tick(grants.getByRole("checkbox", { name: "Editor (editor)" }));
      await grants.getByRole("button", { name: "Grant" }).click();
      const grant = page.getByRole("row", { name: owner.loginName });
      await grant.waitFor();
      expect(await grant.innerText()).toContain("editor");
      await grant.getByRole("button", { name: `Remove the grant of ${owner.loginName}` }).click();
      await page.getByText("Nobody holds roles of this project yet.").waitFor();

      await page.getByRole("button", { name: "New application" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill("Orders API");
      await tick(dialog.getByRole("radio", { name: /^API/ }));
      await tick(dialog.getByRole("radio", { name: /private_key_jwt/ }));
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("This application has no secret").waitFor();
      await dialog.getByRole("link", { name: "Open the application" }).click();
      await page.getByRole("heading", { name: "Orders API", level: 1 }).waitFor();
      await page.getByRole("button", { name: "Generate a key" }).click();
      const keyFile = JSON.parse(await page.getByRole("textbox", { name: "Key file" }).inputValue()) as { type: string; key: string; keyId: string };
      expect(keyFile).toMatchObject({ type: "application", key: expect.stringContaining("PRIVATE KEY") });
      await page.getByRole("rowheader", { name: keyFile.keyId }).waitFor();
      await inspect("application-api", tab);
      await page.getByRole("button", { name: `Remove the key ${keyFile.keyId}` }).click();
      await page.getByText("No keys yet").waitFor();

      await page.getByRole("main").getByRole("link", { name }).click();
      await page.getByRole("heading", { name, level: 1 }).waitFor();
      const settings = page.getByRole("region", { name: "Settings" });
      await settings.getByLabel("Name").fill(`${name} v2`);
      await tick(settings.getByRole("checkbox", { name: /Only users with a grant/ }));
      await settings.getByRole("button", { name: "Save" }).click();
      await page.getByRole("heading", { name: `${name} v2`, level: 1 }).waitFor();
      await expect(settings.getByRole("checkbox", { name: /Only users with a grant/ }).isChecked()).resolves.toBe(true);
      await deactivateAndReactivate(page);

      await page.getByRole("button", { name: "Delete…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete the project" }).click();
      await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
      await page.getByLabel("Find by name").fill(name);
      await page.getByText("No project matches.").waitFor();

      // The console's own application: the service refuses, and the page says so in its words.
      await page.getByLabel("Find by name").fill("Platform");
      await page.getByRole("rowheader", { name: "Platform" }).getByRole("link").click();
      await page.getByRole("heading", { name: "Platform", level: 1 }).waitFor();
      await page.getByRole("link", { name: "Console" }).click();
      await page.getByRole("heading", { name: "Console", level: 1 }).waitFor();
      await page.getByRole("button", { name: "Deactivate" }).click();
      await expect(page.getByRole("alert").innerText()).resolves.toContain("administration console");
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("shows a viewer (IAM_OWNER_VIEWER) a project and its application without the means to change them", async () => {
    const name = uniqueName("Viewed");
    const projectId = await createProject(server.baseUrl, server.adminToken, name);
    const app = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: "Viewed app", oidc: oidc({ redirectUris: [REDIRECT] }) },
    });
    const tab = await signedIn(`/projects/${projectId}`, viewer);
    const { page } = tab;
    try {
      // Its permissions are in (the navigation shows Projects): what is missing below is missing for good.
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Projects" }).waitFor();
      await page.getByRole("heading", { name, level: 1 }).waitFor();
      await expect(page.getByRole("region", { name: "Settings" }).getByLabel("Name").isDisabled()).resolves.toBe(true);
      await page.getByRole("link", { name: "Viewed app" }).click();
      await page.getByRole("heading", { name: "Viewed app", level: 1 }).waitFor();
      await expect(
        page
          .getByText(app.clientId as string)
          .first()
          .isVisible(),
      ).resolves.toBe(true);
      await expect(page.getByLabel("Redirect URIs", { exact: true }).inputValue()).resolves.toBe(REDIRECT);
      await expect(page.getByLabel("Redirect URIs", { exact: true }).isDisabled()).resolves.toBe(true);
      await expect(page.getByRole("button", { name: /^(Save|Deactivate|Delete…|New client secret…)$/ }).count()).resolves.toBe(0);
      await page.getByRole("link", { name }).click();
      await page.getByRole("heading", { name, level: 1 }).waitFor();
      await page.getByRole("rowheader", { name: "Viewed app" }).waitFor();
      await page.getByRole("region", { name: "Project grants" }).getByText("The project is granted to no other organization.").waitFor();
      await expect(
        page.getByRole("button", { name: /^(Save|Deactivate|Delete…|New application|Add role|Grant|Grant to an organization)$/ }).count(),
      ).resolves.toBe(0);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
