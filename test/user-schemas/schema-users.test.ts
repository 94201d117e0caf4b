import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlatformSessions } from "../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import type { Msg } from "../support/results.js";
import { serviceClient } from "../support/service-client.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createOrg, failed, ok, uniqueName, Users } from "../users/helpers.js";
import { Browser, formWith } from "../oidc/browser.js";
import { EMPLOYEE, schemaClient } from "./helpers.js";
import { appClient, createProject, NATIVE, NONE, oidc } from "../apps/helpers.js";

/*
 * Users of a user schema through the user API: created with data the schema validates (every
 * violation named by its JSON pointer), read with only the fields the reader may read,
 * patched with JSON merge patches, searched by schema and searchable field; a schema change
 * never breaks them; they authenticate only as their schema allows, through the same sessions
 * and login pages as people.
 */

const PASSWORD = "Corr3ct-horse!";
const ALL = ["USERNAME", "PASSWORD", "WEBAUTHN", "TOTP", "OTP_EMAIL", "OTP_SMS", "PAT", "KEY"].map((a) => `AUTHENTICATOR_TYPE_${a}`);

/** A schema where each party's access differs: the owner cannot read `diary`, the user cannot read `salary` or write `name`. */
const PRIVATE = {
  type: "object",
  properties: {
    name: { type: "string" },
    salary: { type: "integer", "urn:platform:permission": { owner: "rw" } },
    diary: { type: "string", "urn:platform:permission": { self: "rw" } },
    address: {
      type: "object",
      properties: {
        city: { type: "string", "urn:platform:searchable": true },
        street: { type: "string", "urn:platform:permission": { owner: "rw", self: "rw" } },
      },
    },
  },
};

describe.each(DATABASE_KINDS)("users of a user schema (%s)", (kind) => {
  let server: TestServer;
  let org: { id: string; primary: string };
  const schemas = () => schemaClient(server.baseUrl, server.adminToken);
  const users = (protocol: (typeof PROTOCOLS)[number] = "grpc") => new Users(server, protocol);
  const newSchema = async (schema: object, authenticators: string[] = ALL, type = uniqueName("kind")) =>
    (await schemas().ok("CreateUserSchema", { userSchema: { type, schema: schema as JsonObject, possibleAuthenticators: authenticators } })).details
      .id as string;
  const schemaUser = (schemaId: string, data: object, username = uniqueName("su")) => ({ username, schema: { schemaId, data } });

  beforeAll(async () => {
    server = await startTestServer(kind);
    org = await createOrg(server, uniqueName("schema users org"));
  });
  afterAll(() => server?.close());

  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it("creates, reads, patches, searches and deletes a schema user", async () => {
      const u = users(protocol);
      const schemaId = await newSchema(EMPLOYEE);
      const username = uniqueName("ada");
      const id = await u.create(schemaUser(schemaId, { name: "Ada", team: `t-${protocol}`, salary: 100 }, username), { orgId: org.id });
      const got = await u.get(id);
      expect(got).toMatchObject({
        details: { id, resourceOwner: { id: org.id } },
        username,
        loginName: `${username}@${org.primary}`,
        state: "USER_STATE_ACTIVE",
        schema: { schemaId, revision: 1, data: { name: "Ada", team: `t-${protocol}`, salary: 100 } },
      });
      expect(got.human ?? got.machine).toBeUndefined();

      ok(await u.call("PatchUser", { id, user: { schema: { data: { email: "ada@example.com", salary: null } } } }));
      expect((await u.get(id)).schema.data).toEqual({ name: "Ada", team: `t-${protocol}`, email: "ada@example.com" });

      const bySchema = ok(await u.call("SearchUsers", { filters: [{ schema: { schemaId } }] }));
      expect(bySchema.result.map((r: Msg) => r.details.id)).toEqual([id]);
      const byTeam = ok(await u.call("SearchUsers", { filters: [{ data: { field: "/team", value: `t-${protocol}` } }] }));
      expect(byTeam.result.map((r: Msg) => r.details.id)).toEqual([id]);
      const byType = ok(await u.call("SearchUsers", { filters: [{ type: { type: "USER_TYPE_SCHEMA" } }, { inIds: { ids: [id] } }] }));
      expect(byType.result).toHaveLength(1);
      const notSearchable = failed(await u.call("SearchUsers", { filters: [{ data: { field: "/name", value: "Ada" } }] }), Code.InvalidArgument);
      expect(notSearchable.message).toContain("/name is not a searchable field");

      const inUse = failed(await schemas().call("DeleteUserSchema", { id: schemaId }), Code.FailedPrecondition);
      expect(inUse.message).toContain("is used by 1 user");
      ok(await u.call("DeleteUser", { id }));
      ok(await schemas().call("DeleteUserSchema", { id: schemaId }));
    });

    it("names every violation of the schema with its JSON pointer in one InvalidArgument", async () => {
      const u = users(protocol);
      const schemaId = await newSchema(EMPLOYEE);
      const refused = failed(
        await u.call("CreateUser", { user: schemaUser(schemaId, { email: "not an address", salary: -1, extra: true }), ctx: { orgId: org.id } }),
        Code.InvalidArgument,
      );
      for (const part of ["/name: is required", "/email: must match format", "/salary: must be >= 0", "/extra: is not allowed"])
        expect(refused.message).toContain(part);
      if (protocol === "rest") expect((refused as Msg).httpStatus).toBe(400);
      const id = await u.create(schemaUser(schemaId, { name: "Bo" }), { orgId: org.id });
      const patched = failed(await u.call("PatchUser", { id, user: { schema: { data: { name: "" } } } }), Code.InvalidArgument);
      expect(patched.message).toContain("/name: must NOT have fewer than 1 characters");
      expect((await u.get(id)).schema.data).toEqual({ name: "Bo" });
    });
  });

  it("refuses an unknown schema (NotFound), a deactivated one and kinds that do not match (FailedPrecondition)", async () => {
    const u = users();
    failed(await u.call("CreateUser", { user: schemaUser("no-such-schema", { name: "x" }), ctx: { orgId: org.id } }), Code.NotFound);
    const schemaId = await newSchema(EMPLOYEE);
    ok(await schemas().call("DeactivateUserSchema", { id: schemaId }));
    expect(
      failed(await u.call("CreateUser", { user: schemaUser(schemaId, { name: "x" }), ctx: { orgId: org.id } }), Code.FailedPrecondition).message,
    ).toContain("deactivated");
    ok(await schemas().call("ActivateUserSchema", { id: schemaId }));
    const id = await u.create(schemaUser(schemaId, { name: "x" }), { orgId: org.id });
    failed(await u.call("PatchUser", { id, user: { human: { givenName: "x" } } }), Code.FailedPrecondition);
    const person = await u.create({ username: uniqueName("p"), human: { profile: { givenName: "P", familyName: "Q" }, email: { address: "p@example.com" } } });
    expect(failed(await u.call("PatchUser", { id: person, user: { schema: { data: { name: "x" } } } }), Code.FailedPrecondition).message).toContain(
      "no schema data",
    );
  });

  it("keeps each user at its revision when the schema changes, and validates against the new one at its next write", async () => {
    const u = users();
    const schemaId = await newSchema(EMPLOYEE);
    const id = await u.create(schemaUser(schemaId, { name: "Cy" }), { orgId: org.id });
    const stricter = { ...EMPLOYEE, required: ["name", "email"] };
    ok(await schemas().call("PatchUserSchema", { id: schemaId, userSchema: { schema: stricter } }));
    expect((await u.get(id)).schema).toMatchObject({ revision: 1, data: { name: "Cy" } });
    expect(failed(await u.call("PatchUser", { id, user: { schema: { data: { team: "a" } } } }), Code.InvalidArgument).message).toContain("/email: is required");
    ok(await u.call("PatchUser", { id, user: { schema: { data: { email: "cy@example.com" } } } }));
    expect((await u.get(id)).schema).toMatchObject({ revision: 2, data: { name: "Cy", email: "cy@example.com" } });

    // A field newly marked searchable finds the users stored before; one no longer marked is refused.
    const other = await u.create(schemaUser(schemaId, { name: "Cyd", email: "cyd@example.com" }), { orgId: org.id });
    const byName = { filters: [{ schema: { schemaId } }, { data: { field: "/name", value: "cy", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }] };
    failed(await u.call("SearchUsers", byName), Code.InvalidArgument);
    const named = {
      ...stricter,
      properties: { ...stricter.properties, name: { type: "string", minLength: 1, "urn:platform:searchable": true }, team: { type: "string" } },
    };
    ok(await schemas().call("PatchUserSchema", { id: schemaId, userSchema: { schema: named } }));
    expect(
      ok(await u.call("SearchUsers", byName))
        .result.map((r: Msg) => r.details.id)
        .sort(),
    ).toEqual([id, other].sort());
    failed(await u.call("SearchUsers", { filters: [{ schema: { schemaId } }, { data: { field: "/team", value: "a" } }] }), Code.InvalidArgument);
  });

  it("shows and lets change only the fields each party may (urn:platform:permission)", async () => {
    const u = users();
    const schemaId = await newSchema(PRIVATE);
    const refused = failed(await u.call("CreateUser", { user: schemaUser(schemaId, { diary: "dear" }), ctx: { orgId: org.id } }), Code.PermissionDenied);
    expect(refused.message).toContain("/diary");
    const id = await u.create(schemaUser(schemaId, { name: "Di", salary: 5, address: { city: "Bern", street: "Main 1" } }), { orgId: org.id });
    const self = u.as((await u.pat(id)).token);

    // The user itself: no salary; it writes its diary and street, never its name, username or salary.
    expect((await self.get(id)).schema.data).toEqual({ name: "Di", address: { city: "Bern", street: "Main 1" } });
    ok(await self.call("PatchUser", { id, user: { schema: { data: { diary: "dear diary", address: { street: "Side 2" } } } } }));
    for (const data of [{ name: "Other" }, { salary: 1000 }, { address: { city: "Basel" } }]) {
      const denied = failed(await self.call("PatchUser", { id, user: { schema: { data } } }), Code.PermissionDenied);
      expect(denied.message).toContain(`/${Object.keys(data)[0]}`);
    }
    expect(failed(await self.call("PatchUser", { id, user: { username: "renamed" } }), Code.PermissionDenied).message).toContain("user.username");
    expect((await self.get(id)).schema.data).toEqual({ name: "Di", diary: "dear diary", address: { city: "Bern", street: "Side 2" } });

    // The owner: no diary, and it cannot write one.
    expect((await u.get(id)).schema.data).toEqual({ name: "Di", salary: 5, address: { city: "Bern", street: "Side 2" } });
    failed(await u.call("PatchUser", { id, user: { schema: { data: { diary: null } } } }), Code.PermissionDenied);
    const byCity = ok(
      await u.call("SearchUsers", {
        filters: [{ schema: { schemaId } }, { data: { field: "/address/city", value: "ber", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }],
      }),
    );
    expect(byCity.result.map((r: Msg) => r.details.id)).toEqual([id]);

    // Another user of the organization reads nothing of it.
    const other = await u.create(schemaUser(schemaId, { name: "Ed" }), { orgId: org.id });
    const otherSelf = u.as((await u.pat(other)).token);
    failed(await otherSelf.call("GetUser", { id }), Code.PermissionDenied);
    failed(await otherSelf.call("PatchUser", { id, user: { schema: { data: { diary: "x" } } } }), Code.PermissionDenied);
  });

  it("authenticates only as the schema allows", async () => {
    const u = users();
    const bare = await newSchema(EMPLOYEE, ["AUTHENTICATOR_TYPE_USERNAME"]);
    const id = await u.create(schemaUser(bare, { name: "Fa" }), { orgId: org.id });
    const refusals: [string, object, string][] = [
      ["AddPersonalAccessToken", { id, pat: { expirationDate: new Date(Date.now() + 86_400_000).toISOString() } }, "personal access tokens"],
      ["SetPassword", { id, password: { newPassword: PASSWORD } }, "a password"],
      ["AddTOTP", { id }, "TOTP"],
    ];
    for (const [method, req, what] of refusals) {
      const refused = failed(await u.call(method, req), Code.FailedPrecondition);
      expect(refused.message, method).toMatch(new RegExp(`schema does not allow .*${what}`));
    }
    const allowed = await newSchema(EMPLOYEE, ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD", "AUTHENTICATOR_TYPE_TOTP"]);
    const withPassword = await u.create(schemaUser(allowed, { name: "Gu" }), { orgId: org.id });
    ok(await u.call("SetPassword", { id: withPassword, password: { newPassword: PASSWORD } }));
    ok(await u.call("AddTOTP", { id: withPassword }));
  });

  it("stops a schema user's tokens when its schema drops PAT, and lets them work again when it allows them", async () => {
    const u = users();
    const schemaId = await newSchema(EMPLOYEE, ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PAT"]);
    const id = await u.create(schemaUser(schemaId, { name: "Pa" }), { orgId: org.id });
    const self = u.as((await u.pat(id)).token);
    expect((await self.get(id)).schema.data).toEqual({ name: "Pa" });
    ok(await schemas().call("PatchUserSchema", { id: schemaId, userSchema: { possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME"] } }));
    failed(await self.call("GetUser", { id }), Code.Unauthenticated);
    ok(
      await schemas().call("PatchUserSchema", {
        id: schemaId,
        userSchema: { possibleAuthenticators: ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PAT"] },
      }),
    );
    expect((await self.get(id)).schema.data).toEqual({ name: "Pa" });
  });

  it("signs in through the sessions API and the login pages with username and password", async () => {
    const u = users();
    const schemaId = await newSchema(EMPLOYEE, ["AUTHENTICATOR_TYPE_USERNAME", "AUTHENTICATOR_TYPE_PASSWORD"]);
    const username = uniqueName("signin");
    const id = await u.create(schemaUser(schemaId, { name: "Hu" }, username), { orgId: org.id });
    ok(await u.call("SetPassword", { id, password: { newPassword: PASSWORD } }));
    const ui = (await server.createUser({ roles: [{ context: "instance", roles: ["LOGIN_CLIENT"] }] })).token;
    const sessions = serviceClient(PlatformSessions, server.baseUrl, ui);
    const made = await sessions.ok("CreateSession", { checks: { user: { loginName: `${username}@${org.primary}` }, password: { password: PASSWORD } } });
    expect(made.sessionId).toBeTruthy();
    failed(
      await sessions.call("CreateSession", { checks: { user: { loginName: username }, password: { password: "wrong-Passw0rd!" } } }),
      Code.InvalidArgument,
    );

    // The login pages: an authorization request signed in with the login name and password leaves for the client with a code.
    const projectId = await createProject(server.baseUrl, server.adminToken, uniqueName("schema app"), org.id);
    const app = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
      projectId,
      app: { name: "rp", oidc: oidc({ authMethodType: NONE, appType: NATIVE }) },
    });
    const authorize = new URL("/oauth/v2/authorize", server.baseUrl);
    const params = {
      client_id: app.clientId,
      redirect_uri: "https://app.example/cb",
      response_type: "code",
      scope: "openid",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    };
    for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
    const browser = new Browser(server.baseUrl);
    let page = await browser.open(authorize.href);
    page = await browser.submit(formWith(page.html, "loginName"), { loginName: username }, page.url);
    page = await browser.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    expect(page.left, page.html).toBe(true);
    expect(new URL(page.url).searchParams.get("code")).toBeTruthy();

    // Without "username" in its schema, the user has no login name.
    ok(await schemas().call("PatchUserSchema", { id: schemaId, userSchema: { possibleAuthenticators: ["AUTHENTICATOR_TYPE_PASSWORD"] } }));
    failed(await sessions.call("CreateSession", { checks: { user: { loginName: username } } }), Code.NotFound);
  });
});
