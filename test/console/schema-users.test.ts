import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium, openTab } from "../support/page-checks.js";
import type { Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { EMPLOYEE, schemaClient } from "../user-schemas/helpers.js";
import { createOrg, humanUser, ok, uniqueName, Users } from "../users/helpers.js";
import { CONSOLE_PASSWORD, consoleInspector, instanceOwner, signInToConsole } from "./helpers.js";

/*
 * Users of a user schema in the console (console/src/pages/Users.tsx, User.tsx,
 * pages/user/SchemaData.tsx, pages/user-schema/SchemaUsers.tsx), in headless Chromium: an
 * instance administrator creates one (data that is no JSON object refused before anything is
 * sent; the schema's violations and a field it may not write refused in the API's words, with
 * their JSON pointers), sees its schema, revision and data and only the sections its schema
 * allows, edits its data (a merge patch: a member left out is removed), finds it by kind and
 * by schema, and among the schema's users; each step read back through the API. An
 * organization's owner, who cannot read schemas, sees the kind as "Schema user".
 */

/** EMPLOYEE with a field only the user itself may read and write: an owner giving it a value is PermissionDenied. */
const SCHEMA = { ...EMPLOYEE, properties: { ...EMPLOYEE.properties, diary: { type: "string", "urn:platform:permission": { self: "rw" } } } };

describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`schema users in the console on %s (skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let browser: Browser;
  let admin: string;
  let users: Users;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(kind), launchChromium()]);
    admin = await instanceOwner(server, "schema-users");
    users = new Users(server);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const inspect = consoleInspector(kind);
  const newSchema = async (type: string, possibleAuthenticators: string[]) =>
    (await schemaClient(server.baseUrl, server.adminToken).ok("CreateUserSchema", { userSchema: { type, schema: SCHEMA, possibleAuthenticators } })).details
      .id as string;
  /** The users of the schema, as the API has them. */
  const ofSchema = async (schemaId: string) => (ok(await users.call("SearchUsers", { filters: [{ schema: { schemaId } }] })).result ?? []) as Msg[];

  it("a schema user created (bad JSON and the schema's refusals shown), shown, its data edited, found by kind and by schema", async () => {
    const type = uniqueName("employee");
    const schemaId = await newSchema(type, ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD", "AUTHENTICATOR_TYPE_PAT"]);
    // Another schema, so that choosing one in the dialog and in the filter means something.
    await newSchema(uniqueName("contractor"), ["AUTHENTICATOR_TYPE_USERNAME"]);
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, admin);
      await page.getByRole("link", { name: "Users", exact: true }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();

      const username = uniqueName("ada");
      await page.getByRole("button", { name: "New schema user" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Username").fill(username);
      const data = dialog.getByLabel("Data (JSON)");
      // No schema chosen, and text that is no JSON object: both refused in the form, nothing sent.
      await data.fill('["name", "Ada"]');
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("Choose the user's schema.").waitFor();
      await dialog.getByText("The data must be a JSON object").waitFor();
      // React Aria's label takes the click for its visually hidden input, as a person's would.
      await dialog.getByText(type, { exact: true }).click();
      await data.fill('{ "name": "Ada"');
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText(/^Not JSON: /).waitFor();
      expect(await ofSchema(schemaId)).toEqual([]);

      // The schema's violations, every one with its JSON pointer, in the API's words.
      await data.fill(JSON.stringify({ salary: -1, extra: true }, null, 2));
      await dialog.getByRole("button", { name: "Create" }).click();
      const violations = dialog.getByRole("alert").filter({ hasText: "does not meet user schema" });
      await violations.waitFor();
      for (const part of [`"${type}" (revision 1)`, "/name: is required", "/salary: must be >= 0", "/extra: is not allowed"])
        await expect(violations.innerText()).resolves.toContain(part);
      await inspect("schema-user-new", tab);
      // A field only the user itself may write: PermissionDenied naming it.
      await data.fill(JSON.stringify({ name: "Ada", diary: "dear" }));
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByRole("alert").filter({ hasText: "/diary" }).waitFor();
      expect(await ofSchema(schemaId)).toEqual([]);

      await data.fill(JSON.stringify({ name: "Ada", team: "core", salary: 100 }, null, 2));
      await dialog.getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name: username }).waitFor();
      const [created] = await ofSchema(schemaId);
      const id = created.details.id as string;
      expect(new URL(page.url()).pathname).toBe(`/ui/console/users/${id}`);
      expect(await users.get(id)).toMatchObject({ username, schema: { schemaId, revision: 1, data: { name: "Ada", team: "core", salary: 100 } } });

      // Its page: the kind its schema names, the schema linked, the revision, the data; no person's or machine's sections, and of the
      // credentials only what the schema allows (tokens, no keys).
      const fact = (name: string) => page.locator(`dt:text-is('${name}') + dd`);
      await expect(fact("Kind").innerText()).resolves.toBe(type);
      await expect(fact("Schema").getByRole("link", { name: type }).count()).resolves.toBe(1);
      await expect(fact("Revision").innerText()).resolves.toBe("1");
      const edited = page.getByLabel("Data (JSON)");
      expect(JSON.parse(await edited.inputValue())).toEqual({ name: "Ada", team: "core", salary: 100 });
      await page.getByRole("heading", { name: "Personal access tokens" }).waitFor();
      for (const absent of ["Profile", "Client secret", "Keys", "External accounts"])
        await expect(page.getByRole("heading", { name: absent, exact: true }).count()).resolves.toBe(0);
      await expect(fact("Email").count()).resolves.toBe(0);

      // Edited as a whole: salary left out is removed, team changed, an email added.
      await edited.fill(JSON.stringify({ name: "Ada", team: "infra", email: "ada@example.com" }, null, 2));
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await users.get(id)).schema).toEqual({ schemaId, revision: 1, data: { name: "Ada", team: "infra", email: "ada@example.com" } });

      // Refused by the schema and by a field's permission: the API's words under the form, nothing changed.
      await edited.fill(JSON.stringify({ name: "", team: "infra", email: "ada@example.com" }));
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("alert").filter({ hasText: "/name: must NOT have fewer than 1 characters" }).waitFor();
      await edited.fill(JSON.stringify({ name: "Ada", team: "infra", email: "ada@example.com", diary: "x" }));
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("alert").filter({ hasText: "/diary" }).waitFor();
      await edited.fill("{ nope");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText(/^Not JSON: /).waitFor();
      await inspect("user-schema-user", tab);
      expect((await users.get(id)).schema.data).toEqual({ name: "Ada", team: "infra", email: "ada@example.com" });

      // Among the schema's users on its page.
      await fact("Schema").getByRole("link", { name: type }).click();
      await page.getByRole("heading", { name: type }).waitFor();
      const section = page.getByRole("region", { name: "Users of this schema" });
      await section.getByRole("status").filter({ hasText: "1 user" }).waitFor();
      await section.getByRole("rowheader", { name: username }).waitFor();

      // In the list: by kind, and by schema; a person is in neither.
      await page.getByRole("link", { name: "Users", exact: true }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("button", { name: /Kind/ }).click();
      await page.getByRole("option", { name: "Schema users" }).click();
      const row = page.getByRole("row").filter({ hasText: username });
      await row.waitFor();
      await expect(row.innerText()).resolves.toContain(type);
      await expect.poll(() => page.getByRole("row").filter({ hasText: admin }).count()).toBe(0);
      await page.getByRole("button", { name: /Kind/ }).click();
      await page.getByRole("option", { name: "Every kind" }).click();
      await page.getByRole("row").filter({ hasText: admin }).first().waitFor();
      await page.getByRole("button", { name: /Schema/ }).click();
      await page.getByRole("option", { name: type, exact: true }).click();
      await expect.poll(async () => (await page.getByRole("row").allInnerTexts()).slice(1).map((r) => r.includes(username))).toEqual([true]);
      await inspect("users-by-schema", tab);
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("shows an organization's owner, who cannot read schemas, a schema user as such and lets them edit its data", async () => {
    const schemaId = await newSchema(uniqueName("member"), ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_KEY"]);
    const org = await createOrg(server, uniqueName("Tenant"));
    const owner = uniqueName("tenant-owner");
    const ownerId = await users.create(humanUser(owner, { password: CONSOLE_PASSWORD }), { orgId: org.id });
    ok(
      await protocolClient(PlatformMemberships, "grpc", server.baseUrl).call(
        "CreateMembership",
        { membership: { userId: ownerId, roles: ["ORG_OWNER"] }, ctx: { orgId: org.id } },
        server.adminToken,
      ),
    );
    const username = uniqueName("bo");
    const id = await users.create({ username, schema: { schemaId, data: { name: "Bo" } } }, { orgId: org.id });
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await signInToConsole(page, server, `${owner}@${org.primary}`);
      await page.getByRole("link", { name: "Users", exact: true }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();
      // Neither a schema user to create (no schema to choose) nor a filter by schema.
      await page.getByRole("button", { name: "New person" }).waitFor();
      await expect(page.getByRole("button", { name: "New schema user" }).count()).resolves.toBe(0);
      await expect(page.getByRole("button", { name: /Schema/ }).count()).resolves.toBe(0);
      const row = page.getByRole("row").filter({ hasText: username });
      await expect(row.innerText()).resolves.toContain("Schema user");

      await row.getByRole("link").click();
      await page.getByRole("heading", { name: username }).waitFor();
      await expect(page.locator("dt:text-is('Kind') + dd").innerText()).resolves.toBe("Schema user");
      await expect(page.locator("dt:text-is('Schema') + dd").innerText()).resolves.toBe(schemaId);
      // The schema unread, every credential section shows: the API refuses what the schema does not allow.
      await page.getByRole("heading", { name: "Personal access tokens" }).waitFor();
      await page.getByRole("button", { name: "New token" }).click();
      await page.getByRole("alert").filter({ hasText: "does not allow" }).waitFor();
      await page.getByRole("heading", { name: "Keys", exact: true }).waitFor();

      await page.getByLabel("Data (JSON)").fill(JSON.stringify({ name: "Bo", team: "tenant" }));
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
      expect((await users.get(id)).schema.data).toEqual({ name: "Bo", team: "tenant" });
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
