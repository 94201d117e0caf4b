import { existsSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import type { Client } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { EMPLOYEE, schemaClient } from "../user-schemas/helpers.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * User schemas in the console (console/src/pages/{UserSchemas,UserSchema}.tsx,
 * pages/user-schema/), in headless Chromium as an instance administrator uses them: a schema
 * created (text that is no JSON object refused before anything is sent), listed and found by
 * type, its type and JSON Schema changed (revision 2), a schema the server refuses shown in its
 * words under the form, deactivated and activated, its users listed on its page, its deletion
 * refused while a user uses it, then deleted; each step read back through the API. An organization's owner is not shown it.
 */

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`user schemas in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let schemas: Client;
  let admin: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind), launchChromium()]);
    schemas = schemaClient(server.baseUrl, server.adminToken);
    admin = await instanceOwner(server, "schemas");
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);

  /** The schemas of exactly this type, as the API has them. */
  const byType = async (type: string) => (await schemas.ok("SearchUserSchemas", { filters: [{ type: { value: type } }] })).result ?? [];

  it("a schema created, listed, changed (revision 2), refused in the server's words, deactivated and activated, its deletion refused while used, deleted", async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "User schemas" }).click();
      await page.getByRole("heading", { name: "User schemas" }).waitFor();

      const type = uniqueName("employee");
      await page.getByRole("button", { name: "New user schema" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Type").fill(type);
      // React Aria's label takes the click for its visually hidden input, as a person's would.
      await dialog.getByText("Authenticator app").click();
      const schemaField = dialog.getByLabel("JSON Schema (draft 2020-12)");
      // Not a JSON object: refused under the field, nothing sent.
      await schemaField.fill('["type", "object"]');
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("The schema must be a JSON object").waitFor();
      await schemaField.fill("{ not json");
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText(/^Not JSON: /).waitFor();
      expect(await byType(type)).toEqual([]);
      await schemaField.fill(JSON.stringify(EMPLOYEE, null, 2));
      await inspect("user-schema-new", tab);
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("rowheader", { name: type }).waitFor();
      const [created] = await byType(type);
      expect(created).toMatchObject({
        type,
        state: "USER_SCHEMA_STATE_ACTIVE",
        revision: 1,
        schema: EMPLOYEE,
        possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD", "AUTHENTICATOR_TYPE_TOTP"],
      });
      const id = created.details.id as string;
      const row = page.getByRole("row").filter({ hasText: type });
      await expect(row.innerText()).resolves.toMatch(/Active\s+1\b/);

      // Found by part of its type, on the server; a type no schema has finds none.
      await page.getByLabel("Find schemas by type").fill(type.slice(2, -2).toUpperCase());
      await row.waitFor();
      await page.getByLabel("Find schemas by type").fill(`${type}-none`);
      await page.getByText("No user schemas yet.").waitFor();
      await page.getByLabel("Find schemas by type").fill("");
      await inspect("user-schemas", tab);

      await page.getByRole("link", { name: type }).click();
      await page.getByRole("heading", { name: type }).waitFor();
      const revision = page.locator("dt:text-is('Revision') + dd");
      await expect(revision.innerText()).resolves.toBe("1");
      const changed = `${type}-2`;
      await page.getByLabel("Type").fill(changed);
      await page.getByLabel("JSON Schema (draft 2020-12)").fill(JSON.stringify({ ...EMPLOYEE, required: ["name", "team"] }));
      await page.getByText("Password", { exact: true }).click();
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("heading", { name: changed }).waitFor();
      await expect.poll(() => revision.innerText()).toBe("2");
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await schemas.ok("GetUserSchema", { id })).userSchema).toMatchObject({
        type: changed,
        revision: 2,
        schema: { required: ["name", "team"] },
        possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_TOTP"],
      });

      // A JSON object the server refuses as a JSON Schema: its message under the form, nothing changed.
      await page.getByLabel("JSON Schema (draft 2020-12)").fill('{"type": "objec"}');
      await page.getByRole("button", { name: "Save" }).click();
      const refusal = page.getByRole("alert").filter({ hasText: "not a valid JSON Schema" });
      await refusal.waitFor();
      await expect(refusal.innerText()).resolves.toContain("the schema is not a valid JSON Schema (draft 2020-12)");
      await inspect("user-schema", tab);
      expect((await schemas.ok("GetUserSchema", { id })).userSchema).toMatchObject({ revision: 2, schema: { type: "object" } });

      await page.getByRole("button", { name: "Deactivate" }).click();
      await page.getByRole("button", { name: "Reactivate" }).waitFor();
      await expect(page.locator(".title .badge").innerText()).resolves.toBe("Inactive");
      expect((await schemas.ok("GetUserSchema", { id })).userSchema.state).toBe("USER_SCHEMA_STATE_INACTIVE");
      await page.getByRole("button", { name: "Reactivate" }).click();
      await page.getByRole("button", { name: "Deactivate" }).waitFor();
      expect((await schemas.ok("GetUserSchema", { id })).userSchema.state).toBe("USER_SCHEMA_STATE_ACTIVE");

      // A user of the schema: listed on its page, and the deletion refused in the server's words, in the dialog.
      const users = new Users(server);
      const username = uniqueName("schema-user");
      const userId = await users.create({ username, schema: { schemaId: id, data: { name: "Ada", team: "core" } } });
      await page.reload();
      const ofSchema = page.getByRole("region", { name: "Users of this schema" });
      await ofSchema.getByRole("status").filter({ hasText: "1 user" }).waitFor();
      await expect(ofSchema.getByRole("row").filter({ hasText: username }).innerText()).resolves.toMatch(/\b2\s+Active/);
      await page.getByRole("button", { name: "Delete…" }).click();
      const confirm = page.getByRole("alertdialog");
      await confirm.getByRole("button", { name: "Delete the schema" }).click();
      await confirm.getByRole("alert").filter({ hasText: "is used by 1 user" }).waitFor();
      await inspect("user-schema-delete-refused", tab);
      await confirm.getByRole("button", { name: "Cancel" }).click();
      expect((await schemas.ok("GetUserSchema", { id })).userSchema.type).toBe(changed);

      ok(await users.call("DeleteUser", { id: userId }));
      await page.reload();
      await ofSchema.getByRole("status").filter({ hasText: "0 users" }).waitFor();
      await page.getByRole("button", { name: "Delete…" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete the schema" }).click();
      await page.getByRole("heading", { name: "User schemas" }).waitFor();
      await expect.poll(() => page.getByRole("rowheader", { name: changed }).count()).toBe(0);
      expect(await schemas.call("GetUserSchema", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("does not show an organization's owner the instance's user schemas", async () => {
    const org = await createOrg(server, uniqueName("Tenant"));
    const name = uniqueName("tenant-owner");
    const id = await new Users(server).create(humanUser(name, { password: CONSOLE_PASSWORD }), { orgId: org.id });
    ok(
      await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, `${name}@${org.primary}`);
      await page.getByRole("link", { name: "Users", exact: true }).waitFor();
      await expect(page.getByRole("link", { name: "User schemas" }).count()).resolves.toBe(0);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
