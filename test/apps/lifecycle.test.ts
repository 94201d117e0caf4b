import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import type { Msg } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  ACTIVE,
  API_BASIC,
  API_PKJWT,
  AUTH_CODE,
  BASIC,
  CLIENT_ID,
  CODE,
  ID_TOKEN,
  ID_TOKEN_TOKEN,
  IMPLICIT,
  INACTIVE,
  JWT,
  NATIVE,
  NONE,
  PKJWT,
  POST,
  REFRESH,
  SECRET,
  USER_AGENT,
  allPayloads,
  appClient,
  appEvents,
  appRow,
  createOrg,
  createProject,
  hashToken,
  oidc,
  oidcDefaults,
  orgClient,
  orgOwner,
  projectClient,
  type Client,
} from "./helpers.js";

/** PlatformApps: create every kind with its defaults, read, patch (with secret transitions), states, secrets, removal and cascades. */
describe.each(DATABASE_KINDS)("app lifecycle (%s)", (kind) => {
  let server: TestServer;
  let apps: Client;
  let orgA: string;
  let project: string;
  let counter = 0;
  const unique = (prefix: string) => `${prefix} ${++counter}`;
  /** Every secret ever shown, to look for in the events at the end. */
  const secrets: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind);
    apps = appClient(server.baseUrl, server.adminToken);
    orgA = await createOrg(server.baseUrl, server.adminToken, "App Lifecycle Org A");
    project = await createProject(server.baseUrl, server.adminToken, "App Lifecycle Project", orgA);
  });
  afterAll(() => server?.close());

  const get = async (id: string): Promise<Msg> => (await apps.ok("GetApp", { id })).app;
  const code = (r: CallResult) => (r.ok ? "ok" : r.code);
  const create = async (app: Msg, projectId = project): Promise<Msg> => {
    const made = await apps.ok("CreateApp", { projectId, app });
    if (made.clientSecret) secrets.push(made.clientSecret);
    return made;
  };
  const details = (id: string, sequence: string, changeDate: unknown = expect.any(String)) => ({ id, sequence, changeDate, resourceOwner: orgOwner(orgA) });

  describe("create and get", () => {
    it("creates an OIDC app with only a name, redirect and response type, and reads every default back", async () => {
      const made = await create({ name: "Web Defaults", oidc: oidc() });
      expect(made).toEqual({
        details: details(expect.any(String), "1"),
        clientId: expect.stringMatching(CLIENT_ID),
        clientSecret: expect.stringMatching(SECRET),
      });
      const id = made.details.id as string;
      expect(await get(id)).toEqual({
        details: details(id, "1", made.details.changeDate),
        projectId: project,
        app: { name: "Web Defaults", oidc: oidcDefaults() },
        clientId: made.clientId,
        state: ACTIVE,
        hasSecret: true,
      });
      // Stored as the SHA-256 (base64url) of the secret, which no read returns.
      const row = await appRow(server, id);
      expect(row).toMatchObject({
        org_id: orgA,
        project_id: project,
        name: "Web Defaults",
        type: "oidc",
        client_id: made.clientId,
        state: "active",
        sequence: 1,
      });
      expect(row!.secret_hash).toBe(hashToken(made.clientSecret));
      expect(JSON.stringify(await apps.ok("GetApp", { id }))).not.toContain(made.clientSecret);
    });

    it("gives a secret to OIDC BASIC and POST and API BASIC only", async () => {
      const cases: { app: Msg; secret: boolean; config: Msg }[] = [
        { app: { oidc: oidc({ authMethodType: BASIC }) }, secret: true, config: { oidc: oidcDefaults() } },
        { app: { oidc: oidc({ authMethodType: POST }) }, secret: true, config: { oidc: oidcDefaults({ authMethodType: POST }) } },
        { app: { oidc: oidc({ authMethodType: NONE }) }, secret: false, config: { oidc: oidcDefaults({ authMethodType: NONE }) } },
        { app: { oidc: oidc({ authMethodType: PKJWT }) }, secret: false, config: { oidc: oidcDefaults({ authMethodType: PKJWT }) } },
        { app: { api: {} }, secret: true, config: { api: { authMethodType: API_BASIC } } },
        { app: { api: { authMethodType: API_BASIC } }, secret: true, config: { api: { authMethodType: API_BASIC } } },
        { app: { api: { authMethodType: API_PKJWT } }, secret: false, config: { api: { authMethodType: API_PKJWT } } },
      ];
      for (const c of cases) {
        const name = unique("Kind");
        const made = await create({ name, ...c.app });
        const label = JSON.stringify(c.app);
        expect(made, label).toEqual({
          details: details(expect.any(String), "1"),
          clientId: expect.stringMatching(CLIENT_ID),
          ...(c.secret && { clientSecret: expect.stringMatching(SECRET) }),
        });
        const got = await get(made.details.id);
        expect(got, label).toEqual({
          details: details(made.details.id, "1", made.details.changeDate),
          projectId: project,
          app: { name, ...c.config },
          clientId: made.clientId,
          state: ACTIVE,
          ...(c.secret && { hasSecret: true }),
        });
        const row = await appRow(server, made.details.id);
        expect(row!.type, label).toBe("api" in c.app ? "api" : "oidc");
        expect(row!.secret_hash, label).toBe(c.secret ? hashToken(made.clientSecret) : null);
      }
    });

    it("defaults the grant types from the response types", async () => {
      const cases: [string[], string[]][] = [
        [[CODE], [AUTH_CODE]],
        [[ID_TOKEN], [IMPLICIT]],
        [[ID_TOKEN_TOKEN], [IMPLICIT]],
        [[ID_TOKEN, ID_TOKEN_TOKEN], [IMPLICIT]],
        [
          [CODE, ID_TOKEN],
          [AUTH_CODE, IMPLICIT],
        ],
        [
          [CODE, ID_TOKEN, ID_TOKEN_TOKEN],
          [AUTH_CODE, IMPLICIT],
        ],
      ];
      for (const [responseTypes, grantTypes] of cases) {
        const made = await create({ name: unique("Grants"), oidc: oidc({ responseTypes }) });
        expect((await get(made.details.id)).app.oidc, responseTypes.join()).toEqual(oidcDefaults({ responseTypes, grantTypes }));
      }
    });

    it("keeps a full configuration as given", async () => {
      const full = {
        redirectUris: ["com.example.app:/cb", "http://127.0.0.1:8080/cb", "https://app.example/cb"],
        responseTypes: [CODE],
        grantTypes: [AUTH_CODE, REFRESH],
        appType: NATIVE,
        authMethodType: NONE,
        postLogoutRedirectUris: ["com.example.app:/logout"],
        devMode: true,
        accessTokenType: JWT,
        accessTokenRoleAssertion: true,
        idTokenRoleAssertion: true,
        idTokenUserinfoAssertion: true,
        clockSkew: "5s",
        additionalOrigins: ["https://other.example", "http://localhost:3000"],
      };
      const made = await create({ name: "Full", oidc: full });
      expect(made.clientSecret).toBeUndefined();
      expect(await get(made.details.id)).toMatchObject({ app: { name: "Full", oidc: full }, state: ACTIVE });
      expect((await get(made.details.id)).hasSecret).toBeUndefined();
      const skew = await create({ name: "Skew", oidc: oidc({ clockSkew: "1.500s" }) });
      expect((await get(skew.details.id)).app.oidc.clockSkew).toBe("1.500s");
    });

    it("gives every app its own random client ID", async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 8; i++) ids.add((await create({ name: unique("Distinct"), api: {} })).clientId);
      expect(ids.size).toBe(8);
      for (const id of ids) expect(id).toMatch(CLIENT_ID);
    });

    it("refuses a name taken in the project in any case; the same name in another project is fine", async () => {
      await create({ name: "Taken Name", api: {} });
      for (const name of ["Taken Name", "taken name", "TAKEN NAME"]) {
        const r = await apps.call("CreateApp", { projectId: project, app: { name, oidc: oidc() } });
        expect(r, name).toMatchObject({ ok: false, code: Code.AlreadyExists });
      }
      const other = await createProject(server.baseUrl, server.adminToken, "Other Project", orgA);
      expect((await create({ name: "taken name", api: {} }, other)).details.sequence).toBe("1");
    });

    it("refuses a missing project, a missing configuration, and a project outside the ctx organization", async () => {
      expect(await apps.call("CreateApp", { projectId: "no-such-project", app: { name: "x", api: {} } })).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await apps.call("CreateApp", { projectId: project, app: { name: "No Config" } })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await apps.call("CreateApp", { projectId: project })).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await apps.call("CreateApp", { projectId: project, app: { name: "Wrong Org", api: {} }, ctx: { orgId: server.defaultOrgId } })).toMatchObject({
        ok: false,
        code: Code.NotFound,
      });
      const inCtx = await apps.ok("CreateApp", { projectId: project, app: { name: "Right Org", api: {} }, ctx: { orgId: orgA } });
      expect(inCtx.details.resourceOwner).toEqual(orgOwner(orgA));
      secrets.push(inCtx.clientSecret);
      const rows = await server.service.store.db.selectFrom("apps").select("name").where("name", "in", ["No Config", "Wrong Org", "x"]).execute();
      expect(rows).toEqual([]);
      expect(await apps.call("GetApp", { id: "no-such-app" })).toMatchObject({ ok: false, code: Code.NotFound });
    });
  });

  describe("patch", () => {
    it("renames, changes OIDC fields, replaces lists, and keeps the rest", async () => {
      const made = await create({ name: "Patch Me", oidc: oidc({ postLogoutRedirectUris: ["https://app.example/bye"] }) });
      const id = made.details.id as string;
      const patched = await apps.ok("PatchApp", {
        id,
        app: {
          name: "Patched",
          oidc: {
            redirectUris: { values: ["https://new.example/a", "https://new.example/b"] },
            responseTypes: { values: [CODE, ID_TOKEN] },
            grantTypes: { values: [AUTH_CODE, IMPLICIT, REFRESH] },
            appType: USER_AGENT,
            accessTokenType: JWT,
            idTokenRoleAssertion: true,
            clockSkew: "2s",
            additionalOrigins: { values: ["https://spa.example"] },
          },
        },
      });
      expect(patched).toEqual({ details: details(id, "2") });
      expect(await get(id)).toEqual({
        details: details(id, "2", patched.details.changeDate),
        projectId: project,
        app: {
          name: "Patched",
          oidc: oidcDefaults({
            redirectUris: ["https://new.example/a", "https://new.example/b"],
            responseTypes: [CODE, ID_TOKEN],
            grantTypes: [AUTH_CODE, IMPLICIT, REFRESH],
            appType: USER_AGENT,
            postLogoutRedirectUris: ["https://app.example/bye"],
            accessTokenType: JWT,
            idTokenRoleAssertion: true,
            clockSkew: "2s",
            additionalOrigins: ["https://spa.example"],
          }),
        },
        clientId: made.clientId,
        state: ACTIVE,
        hasSecret: true,
      });
      // Lists may be emptied; the secret stays the same through changes that keep the method.
      expect(await apps.ok("PatchApp", { id, app: { oidc: { postLogoutRedirectUris: { values: [] }, additionalOrigins: {} } } })).toEqual({
        details: details(id, "3"),
      });
      const after = await get(id);
      expect(after.app.oidc.postLogoutRedirectUris).toBeUndefined();
      expect(after.app.oidc.additionalOrigins).toBeUndefined();
      expect((await appRow(server, id))!.secret_hash).toBe(hashToken(made.clientSecret));
    });

    it("a patch that changes nothing keeps the sequence and writes no event", async () => {
      const made = await create({ name: "Same", oidc: oidc({ devMode: true }) });
      const id = made.details.id as string;
      const noops: JsonObject[] = [
        {},
        { name: "Same" },
        { oidc: {} },
        { oidc: { devMode: true, redirectUris: { values: ["https://app.example/cb"] }, authMethodType: BASIC, clockSkew: "0s" } },
      ];
      for (const app of noops) {
        expect(await apps.ok("PatchApp", { id, app }), JSON.stringify(app)).toEqual({ details: details(id, "1", made.details.changeDate) });
      }
      expect((await appEvents(server, id)).map((e) => e.event_type)).toEqual(["app.added"]);
      // A change of case only is a rename.
      expect(await apps.ok("PatchApp", { id, app: { name: "SAME" } })).toEqual({ details: details(id, "2") });
      expect((await get(id)).app.name).toBe("SAME");
    });

    it("refuses a name of another app of the project in any case", async () => {
      await create({ name: "Occupied", api: {} });
      const made = await create({ name: "Mover", api: {} });
      for (const name of ["Occupied", "occupied"]) {
        expect(await apps.call("PatchApp", { id: made.details.id, app: { name } }), name).toMatchObject({ ok: false, code: Code.AlreadyExists });
      }
      expect((await get(made.details.id)).app.name).toBe("Mover");
    });

    it("validates the resulting configuration whole and stores nothing when refused", async () => {
      const made = await create({ name: "Whole", oidc: oidc({ appType: NATIVE, redirectUris: ["http://127.0.0.1/cb", "com.example.app:/cb"] }) });
      const id = made.details.id as string;
      const before = await get(id);
      const refused: [Msg, string][] = [
        // Native loopback and custom scheme are no longer allowed for a web app.
        [{ oidc: { appType: "OIDC_APP_TYPE_WEB" } }, "redirect_uris"],
        // ID_TOKEN without the implicit grant the app does not have.
        [{ oidc: { responseTypes: { values: [ID_TOKEN] } } }, "IMPLICIT"],
        [{ oidc: { grantTypes: { values: [REFRESH] } } }, "AUTHORIZATION_CODE"],
        [{ oidc: { additionalOrigins: { values: ["https://a.example/path"] } } }, "additional_origins"],
        [{ name: "Renamed Too", oidc: { postLogoutRedirectUris: { values: ["https://x.example/#f"] } } }, "post_logout_redirect_uris"],
        [{ oidc: { clockSkew: "6s" } }, "clock_skew"],
        [{ oidc: { responseTypes: { values: [] } } }, "response_types"],
      ];
      for (const [app, field] of refused) {
        const r = await apps.call("PatchApp", { id, app });
        expect(r, JSON.stringify(app)).toMatchObject({ ok: false, code: Code.InvalidArgument, message: expect.stringContaining(field) });
      }
      expect(await get(id)).toEqual(before);
      expect((await appEvents(server, id)).length).toBe(1);
      // Response and grant types changed together are fine.
      expect(await apps.ok("PatchApp", { id, app: { oidc: { responseTypes: { values: [ID_TOKEN] }, grantTypes: { values: [IMPLICIT] } } } })).toEqual({
        details: details(id, "2"),
      });
    });

    it("switches OIDC secrets: BASIC→NONE removes it, NONE→POST makes a new one shown once, POST→PRIVATE_KEY_JWT removes it", async () => {
      const made = await create({ name: "Secret Steps", oidc: oidc() });
      const id = made.details.id as string;

      const toNone = await apps.ok("PatchApp", { id, app: { oidc: { authMethodType: NONE } } });
      expect(toNone).toEqual({ details: details(id, "2") });
      expect(await get(id)).toMatchObject({ app: { oidc: { authMethodType: NONE } } });
      expect((await get(id)).hasSecret).toBeUndefined();
      expect((await appRow(server, id))!.secret_hash).toBeNull();
      expect(await apps.call("RegenerateAppSecret", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });

      const toPost = await apps.ok("PatchApp", { id, app: { oidc: { authMethodType: POST } } });
      expect(toPost).toEqual({ details: details(id, "3"), clientSecret: expect.stringMatching(SECRET) });
      secrets.push(toPost.clientSecret);
      expect(toPost.clientSecret).not.toBe(made.clientSecret);
      expect(await get(id)).toMatchObject({ app: { oidc: { authMethodType: POST } }, hasSecret: true });
      expect((await appRow(server, id))!.secret_hash).toBe(hashToken(toPost.clientSecret));

      // BASIC and POST share the secret: a change between them keeps a secret.
      const toBasic = await apps.ok("PatchApp", { id, app: { oidc: { authMethodType: BASIC } } });
      expect(toBasic.details).toEqual(details(id, "4"));
      if (toBasic.clientSecret) secrets.push(toBasic.clientSecret);
      expect((await get(id)).hasSecret).toBe(true);
      expect((await appRow(server, id))!.secret_hash).toBe(hashToken(toBasic.clientSecret ?? toPost.clientSecret));

      const toJwt = await apps.ok("PatchApp", { id, app: { oidc: { authMethodType: PKJWT } } });
      expect(toJwt).toEqual({ details: details(id, "5") });
      expect((await get(id)).hasSecret).toBeUndefined();
      expect((await appRow(server, id))!.secret_hash).toBeNull();
      expect(await apps.call("RegenerateAppSecret", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
    });

    it("switches API secrets: BASIC→PRIVATE_KEY_JWT removes it, back to BASIC makes a new one", async () => {
      const made = await create({ name: "Api Steps", api: {} });
      const id = made.details.id as string;
      expect(await apps.ok("PatchApp", { id, app: { api: { authMethodType: API_PKJWT } } })).toEqual({ details: details(id, "2") });
      expect(await get(id)).toEqual({
        details: details(id, "2"),
        projectId: project,
        app: { name: "Api Steps", api: { authMethodType: API_PKJWT } },
        clientId: made.clientId,
        state: ACTIVE,
      });
      expect((await appRow(server, id))!.secret_hash).toBeNull();
      const back = await apps.ok("PatchApp", { id, app: { api: { authMethodType: API_BASIC } } });
      expect(back).toEqual({ details: details(id, "3"), clientSecret: expect.stringMatching(SECRET) });
      secrets.push(back.clientSecret);
      expect(back.clientSecret).not.toBe(made.clientSecret);
      expect((await appRow(server, id))!.secret_hash).toBe(hashToken(back.clientSecret));
      expect((await get(id)).hasSecret).toBe(true);
      // An empty api patch changes nothing.
      expect(await apps.ok("PatchApp", { id, app: { api: {} } })).toEqual({ details: details(id, "3") });
    });

    it("refuses an OIDC patch of an API app and the other way round, changing nothing", async () => {
      const api = await create({ name: "Kind Api", api: {} });
      const web = await create({ name: "Kind Oidc", oidc: oidc() });
      const r1 = await apps.call("PatchApp", { id: api.details.id, app: { name: "Kind Api 2", oidc: { devMode: true } } });
      expect(r1).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      const r2 = await apps.call("PatchApp", { id: web.details.id, app: { name: "Kind Oidc 2", api: { authMethodType: API_PKJWT } } });
      expect(r2).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((await get(api.details.id)).app).toEqual({ name: "Kind Api", api: { authMethodType: API_BASIC } });
      expect((await get(web.details.id)).app).toEqual({ name: "Kind Oidc", oidc: oidcDefaults() });
      expect(await apps.call("PatchApp", { id: "no-such-app", app: { name: "x" } })).toMatchObject({ ok: false, code: Code.NotFound });
    });
  });

  describe("states and secrets", () => {
    it("deactivates and reactivates, refusing each when already so", async () => {
      const made = await create({ name: "Stateful", oidc: oidc() });
      const id = made.details.id as string;
      expect(await apps.ok("DeactivateApp", { id })).toEqual({ details: details(id, "2") });
      expect((await get(id)).state).toBe(INACTIVE);
      expect((await appRow(server, id))!.state).toBe("inactive");
      expect(await apps.call("DeactivateApp", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      // An inactive app can still be changed.
      expect(await apps.ok("PatchApp", { id, app: { name: "Stateful Inactive" } })).toEqual({ details: details(id, "3") });
      expect(await apps.ok("ReactivateApp", { id })).toEqual({ details: details(id, "4") });
      expect((await get(id)).state).toBe(ACTIVE);
      expect(await apps.call("ReactivateApp", { id })).toMatchObject({ ok: false, code: Code.FailedPrecondition });
      expect((await get(id)).details.sequence).toBe("4");
      expect(code(await apps.call("DeactivateApp", { id: "no-such-app" }))).toBe(Code.NotFound);
      expect(code(await apps.call("ReactivateApp", { id: "no-such-app" }))).toBe(Code.NotFound);
    });

    it("regenerates secrets of secret-based apps only; the old hash is replaced", async () => {
      for (const app of [{ oidc: oidc() }, { oidc: oidc({ authMethodType: POST }) }, { api: {} }]) {
        const made = await create({ name: unique("Regen"), ...app });
        const id = made.details.id as string;
        const first = await apps.ok("RegenerateAppSecret", { id });
        expect(first, JSON.stringify(app)).toEqual({ details: details(id, "2"), clientSecret: expect.stringMatching(SECRET) });
        const second = await apps.ok("RegenerateAppSecret", { id });
        expect(second.details.sequence).toBe("3");
        secrets.push(first.clientSecret, second.clientSecret);
        expect(new Set([made.clientSecret, first.clientSecret, second.clientSecret]).size).toBe(3);
        expect((await appRow(server, id))!.secret_hash).toBe(hashToken(second.clientSecret));
        expect(await get(id)).toMatchObject({ details: { sequence: "3" }, hasSecret: true, clientId: made.clientId });
        expect((await appEvents(server, id)).map((e) => e.event_type)).toEqual(["app.added", "app.secret.regenerated", "app.secret.regenerated"]);
      }
      for (const app of [{ oidc: oidc({ authMethodType: NONE }) }, { oidc: oidc({ authMethodType: PKJWT }) }, { api: { authMethodType: API_PKJWT } }]) {
        const made = await create({ name: unique("NoRegen"), ...app });
        const r = await apps.call("RegenerateAppSecret", { id: made.details.id });
        expect(r, JSON.stringify(app)).toMatchObject({ ok: false, code: Code.FailedPrecondition });
        expect((await appRow(server, made.details.id))!).toMatchObject({ secret_hash: null, sequence: 1 });
      }
      expect(code(await apps.call("RegenerateAppSecret", { id: "no-such-app" }))).toBe(Code.NotFound);
    });
  });

  describe("removal", () => {
    it("deletes an app: then NotFound everywhere, and its name is free again", async () => {
      const made = await create({ name: "Doomed", oidc: oidc() });
      const id = made.details.id as string;
      expect(await apps.ok("DeleteApp", { id })).toEqual({ details: details(id, "2") });
      for (const [method, req] of [
        ["GetApp", { id }],
        ["DeleteApp", { id }],
        ["PatchApp", { id, app: { name: "x" } }],
        ["DeactivateApp", { id }],
        ["RegenerateAppSecret", { id }],
      ] as const) {
        expect(code(await apps.call(method, req)), method).toBe(Code.NotFound);
      }
      expect(await appRow(server, id)).toBeUndefined();
      expect((await apps.ok("SearchApps", { filters: [{ clientId: { clientId: made.clientId } }] })).result).toBeUndefined();
      expect((await create({ name: "doomed", api: {} })).details.sequence).toBe("1");
      expect((await appEvents(server, id)).map((e) => e.event_type)).toEqual(["app.added", "app.removed"]);
    });

    it("DeleteProject removes the project's apps and only those", async () => {
      const doomedProject = await createProject(server.baseUrl, server.adminToken, "Doomed Project", orgA);
      const a = await create({ name: "In Doomed 1", oidc: oidc() }, doomedProject);
      const b = await create({ name: "In Doomed 2", api: {} }, doomedProject);
      const survivor = await create({ name: "Survivor", api: {} });
      await projectClient(server.baseUrl, server.adminToken).ok("DeleteProject", { id: doomedProject });
      for (const id of [a.details.id, b.details.id]) {
        expect(code(await apps.call("GetApp", { id }))).toBe(Code.NotFound);
        expect(await appRow(server, id)).toBeUndefined();
      }
      expect((await get(survivor.details.id)).state).toBe(ACTIVE);
      expect(code(await apps.call("CreateApp", { projectId: doomedProject, app: { name: "Late", api: {} } }))).toBe(Code.NotFound);
    });

    it("DeleteOrganization removes the apps of all its projects", async () => {
      const orgB = await createOrg(server.baseUrl, server.adminToken, "App Doomed Org");
      const p1 = await createProject(server.baseUrl, server.adminToken, "Org Project 1", orgB);
      const p2 = await createProject(server.baseUrl, server.adminToken, "Org Project 2", orgB);
      const made = [await create({ name: "O1", oidc: oidc() }, p1), await create({ name: "O2", api: {} }, p2), await create({ name: "O3", api: {} }, p2)];
      const survivor = await create({ name: "Org Survivor", oidc: oidc() });
      await orgClient(server.baseUrl, server.adminToken).ok("DeleteOrganization", { id: orgB });
      for (const m of made) expect(code(await apps.call("GetApp", { id: m.details.id }))).toBe(Code.NotFound);
      expect(await server.service.store.db.selectFrom("apps").select("id").where("org_id", "=", orgB).execute()).toEqual([]);
      expect((await get(survivor.details.id)).state).toBe(ACTIVE);
    });
  });

  describe("concurrency", () => {
    it("of creates with one name in different cases, exactly one wins; the others are AlreadyExists", async () => {
      const names = ["Race", "race", "RACE", "rAce", "raCE", "RaCe"];
      const results = await Promise.all(names.map((name) => apps.call("CreateApp", { projectId: project, app: { name, api: {} } })));
      expect(results.filter((r) => r.ok).length).toBe(1);
      for (const r of results.filter((r) => !r.ok)) expect(r).toMatchObject({ ok: false, code: Code.AlreadyExists });
      for (const r of results) if (r.ok) secrets.push(r.message.clientSecret as string);
      const rows = await server.service.store.db.selectFrom("apps").select("name").where("project_id", "=", project).where("name", "in", names).execute();
      expect(rows.length).toBe(1);
    });

    it("concurrent regenerations all succeed in turn; the stored hash is that of the last one", async () => {
      const made = await create({ name: "Regen Race", oidc: oidc() });
      const id = made.details.id as string;
      const results = (await Promise.all(Array.from({ length: 5 }, () => apps.call("RegenerateAppSecret", { id })))).map((r) => {
        expect(r).toMatchObject({ ok: true });
        return (r as { message: Msg }).message;
      });
      for (const r of results) secrets.push(r.clientSecret);
      expect(results.map((r) => r.details.sequence).sort()).toEqual(["2", "3", "4", "5", "6"]);
      expect(new Set(results.map((r) => r.clientSecret)).size).toBe(5);
      const last = results.find((r) => r.details.sequence === "6")!;
      expect((await appRow(server, id))!.secret_hash).toBe(hashToken(last.clientSecret));
      expect((await get(id)).details.sequence).toBe("6");
    });

    it("a create racing the project's deletion leaves no app behind", async () => {
      const doomed = await createProject(server.baseUrl, server.adminToken, "Racing Project", orgA);
      const [made, deleted] = await Promise.all([
        apps.call("CreateApp", { projectId: doomed, app: { name: "Racer", api: {} } }),
        projectClient(server.baseUrl, server.adminToken).call("DeleteProject", { id: doomed }),
      ]);
      expect(deleted).toMatchObject({ ok: true });
      if (made.ok) secrets.push(made.message.clientSecret as string);
      else expect(made).toMatchObject({ ok: false, code: Code.NotFound });
      expect(await server.service.store.db.selectFrom("apps").select("id").where("project_id", "=", doomed).execute()).toEqual([]);
    });
  });

  it("no event carries any secret shown during this suite", async () => {
    expect(secrets.length).toBeGreaterThan(10);
    const payloads = await allPayloads(server);
    for (const secret of secrets) expect(payloads.includes(secret), "secret in events").toBe(false);
    // Nor the hashes of those secrets.
    for (const secret of secrets) expect(payloads.includes(hashToken(secret)), "hash in events").toBe(false);
  });
});
