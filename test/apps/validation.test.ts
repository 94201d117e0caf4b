import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  AUTH_CODE,
  CODE,
  ID_TOKEN,
  ID_TOKEN_TOKEN,
  IMPLICIT,
  NATIVE,
  REFRESH,
  USER_AGENT,
  WEB,
  appClient,
  createProject,
  oidc,
  type Client,
} from "./helpers.js";

const TOKEN_EXCHANGE = "OIDC_GRANT_TYPE_TOKEN_EXCHANGE";
const long = (n: number) => `https://app.example/${"x".repeat(n - "https://app.example/".length)}`;
const many = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example/cb${i}`);

/** Each bad configuration, and what the InvalidArgument message must mention (a field, or both sides). */
const BAD: { what: string; app: JsonObject; mentions: string[] }[] = [
  // Names.
  { what: "empty name", app: { name: "", api: {} }, mentions: ["name"] },
  { what: "name of 201 characters", app: { name: "n".repeat(201), api: {} }, mentions: ["name"] },
  { what: "neither oidc nor api", app: { name: "x" }, mentions: ["config"] },
  // Response types.
  { what: "no response type", app: { name: "x", oidc: oidc({ responseTypes: [] }) }, mentions: ["response_types"] },
  { what: "no response type field at all", app: { name: "x", oidc: { redirectUris: ["https://app.example/cb"] } }, mentions: ["response_types"] },
  { what: "UNSPECIFIED response type", app: { name: "x", oidc: oidc({ responseTypes: ["OIDC_RESPONSE_TYPE_UNSPECIFIED"] }) }, mentions: ["response_types"] },
  { what: "duplicate response types", app: { name: "x", oidc: oidc({ responseTypes: [CODE, CODE] }) }, mentions: ["response_types"] },
  { what: "unknown response type", app: { name: "x", oidc: oidc({ responseTypes: [7] }) }, mentions: ["response_types"] },
  { what: "UNSPECIFIED grant type", app: { name: "x", oidc: oidc({ grantTypes: [AUTH_CODE, "OIDC_GRANT_TYPE_UNSPECIFIED"] }) }, mentions: ["grant_types"] },
  { what: "duplicate grant types", app: { name: "x", oidc: oidc({ grantTypes: [AUTH_CODE, AUTH_CODE] }) }, mentions: ["grant_types"] },
  { what: "unknown app type", app: { name: "x", oidc: oidc({ appType: 9 }) }, mentions: ["app_type"] },
  { what: "unknown auth method", app: { name: "x", oidc: oidc({ authMethodType: 9 }) }, mentions: ["auth_method_type"] },
  { what: "unknown access token type", app: { name: "x", oidc: oidc({ accessTokenType: 9 }) }, mentions: ["access_token_type"] },
  { what: "unknown API auth method", app: { name: "x", api: { authMethodType: 9 } }, mentions: ["auth_method_type"] },
  // Response and grant types that do not fit each other.
  {
    what: "CODE without AUTHORIZATION_CODE",
    app: { name: "x", oidc: oidc({ responseTypes: [CODE], grantTypes: [REFRESH] }) },
    mentions: ["CODE", "AUTHORIZATION_CODE"],
  },
  {
    what: "CODE with IMPLICIT only",
    app: { name: "x", oidc: oidc({ responseTypes: [CODE], grantTypes: [IMPLICIT] }) },
    mentions: ["CODE", "AUTHORIZATION_CODE"],
  },
  {
    what: "ID_TOKEN without IMPLICIT",
    app: { name: "x", oidc: oidc({ responseTypes: [ID_TOKEN], grantTypes: [AUTH_CODE] }) },
    mentions: ["ID_TOKEN", "IMPLICIT"],
  },
  {
    what: "ID_TOKEN_TOKEN without IMPLICIT",
    app: { name: "x", oidc: oidc({ responseTypes: [CODE, ID_TOKEN_TOKEN], grantTypes: [AUTH_CODE] }) },
    mentions: ["ID_TOKEN", "IMPLICIT"],
  },
  {
    what: "AUTHORIZATION_CODE without CODE",
    app: { name: "x", oidc: oidc({ responseTypes: [ID_TOKEN], grantTypes: [IMPLICIT, AUTH_CODE] }) },
    mentions: ["AUTHORIZATION_CODE", "CODE"],
  },
  {
    what: "IMPLICIT without ID_TOKEN*",
    app: { name: "x", oidc: oidc({ responseTypes: [CODE], grantTypes: [AUTH_CODE, IMPLICIT] }) },
    mentions: ["IMPLICIT", "ID_TOKEN"],
  },
  {
    what: "REFRESH_TOKEN without AUTHORIZATION_CODE",
    app: { name: "x", oidc: oidc({ responseTypes: [ID_TOKEN], grantTypes: [IMPLICIT, REFRESH] }) },
    mentions: ["REFRESH_TOKEN", "AUTHORIZATION_CODE"],
  },
  // Redirect URIs.
  { what: "relative redirect", app: { name: "x", oidc: oidc({ redirectUris: ["/cb"] }) }, mentions: ["redirect_uris"] },
  { what: "redirect without scheme", app: { name: "x", oidc: oidc({ redirectUris: ["app.example/cb"] }) }, mentions: ["redirect_uris"] },
  { what: "empty redirect", app: { name: "x", oidc: oidc({ redirectUris: [""] }) }, mentions: ["redirect_uris"] },
  { what: "redirect with fragment", app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/cb#frag"] }) }, mentions: ["redirect_uris"] },
  { what: "redirect with empty fragment", app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/cb#"] }) }, mentions: ["redirect_uris"] },
  { what: "redirect with whitespace", app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/c b"] }) }, mentions: ["redirect_uris"] },
  { what: "redirect with a tab", app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/c\tb"] }) }, mentions: ["redirect_uris"] },
  { what: "http redirect of a web app", app: { name: "x", oidc: oidc({ redirectUris: ["http://app.example/cb"] }) }, mentions: ["redirect_uris"] },
  { what: "http loopback of a web app", app: { name: "x", oidc: oidc({ redirectUris: ["http://localhost:3000/cb"] }) }, mentions: ["redirect_uris"] },
  {
    what: "http loopback of a user agent app",
    app: { name: "x", oidc: oidc({ appType: USER_AGENT, redirectUris: ["http://127.0.0.1/cb"] }) },
    mentions: ["redirect_uris"],
  },
  {
    what: "http non-loopback of a native app",
    app: { name: "x", oidc: oidc({ appType: NATIVE, redirectUris: ["http://app.example/cb"] }) },
    mentions: ["redirect_uris"],
  },
  {
    what: "native loopback look-alike",
    app: { name: "x", oidc: oidc({ appType: NATIVE, redirectUris: ["http://localhost.evil.example/cb"] }) },
    mentions: ["redirect_uris"],
  },
  {
    what: "native loopback as user info",
    app: { name: "x", oidc: oidc({ appType: NATIVE, redirectUris: ["http://localhost@evil.example/cb"] }) },
    mentions: ["redirect_uris"],
  },
  { what: "custom scheme of a web app", app: { name: "x", oidc: oidc({ redirectUris: ["com.example.app:/cb"] }) }, mentions: ["redirect_uris"] },
  {
    what: "custom scheme of a web app in dev mode",
    app: { name: "x", oidc: oidc({ devMode: true, redirectUris: ["com.example.app:/cb"] }) },
    mentions: ["redirect_uris"],
  },
  {
    what: "custom scheme of a user agent app",
    app: { name: "x", oidc: oidc({ appType: USER_AGENT, redirectUris: ["com.example.app:/cb"] }) },
    mentions: ["redirect_uris"],
  },
  {
    what: "one bad among good redirects",
    app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/a", "http://app.example/b"] }) },
    mentions: ["redirect_uris", "http://app.example/b"],
  },
  {
    what: "duplicate redirects",
    app: { name: "x", oidc: oidc({ redirectUris: ["https://app.example/cb", "https://app.example/cb"] }) },
    mentions: ["redirect_uris"],
  },
  { what: "101 redirects", app: { name: "x", oidc: oidc({ redirectUris: many(101) }) }, mentions: ["redirect_uris"] },
  { what: "redirect of 2001 characters", app: { name: "x", oidc: oidc({ redirectUris: [long(2001)] }) }, mentions: ["redirect_uris"] },
  // Post-logout redirect URIs: the same rules.
  { what: "relative post-logout", app: { name: "x", oidc: oidc({ postLogoutRedirectUris: ["/bye"] }) }, mentions: ["post_logout_redirect_uris"] },
  {
    what: "post-logout with fragment",
    app: { name: "x", oidc: oidc({ postLogoutRedirectUris: ["https://app.example/bye#x"] }) },
    mentions: ["post_logout_redirect_uris"],
  },
  {
    what: "http post-logout of a web app",
    app: { name: "x", oidc: oidc({ postLogoutRedirectUris: ["http://app.example/bye"] }) },
    mentions: ["post_logout_redirect_uris"],
  },
  {
    what: "javascript: of a native app",
    app: { name: "x", oidc: oidc({ appType: NATIVE, redirectUris: ["javascript:alert(1)"] }) },
    mentions: ["redirect_uris"],
  },
  { what: "data: of a native app", app: { name: "x", oidc: oidc({ appType: NATIVE, redirectUris: ["data:text/html,hi"] }) }, mentions: ["redirect_uris"] },
  { what: "https without slashes", app: { name: "x", oidc: oidc({ redirectUris: ["https:app.example/cb"] }) }, mentions: ["redirect_uris"] },
  { what: "https without a host", app: { name: "x", oidc: oidc({ redirectUris: ["https:///cb"] }) }, mentions: ["redirect_uris"] },
  { what: "an origin with a trailing slash", app: { name: "x", oidc: oidc({ additionalOrigins: ["https://a.example/"] }) }, mentions: ["additional_origins"] },
  {
    what: "custom scheme post-logout of a web app",
    app: { name: "x", oidc: oidc({ postLogoutRedirectUris: ["com.example.app:/bye"] }) },
    mentions: ["post_logout_redirect_uris"],
  },
  { what: "101 post-logout URIs", app: { name: "x", oidc: oidc({ postLogoutRedirectUris: many(101) }) }, mentions: ["post_logout_redirect_uris"] },
  { what: "post-logout of 2001 characters", app: { name: "x", oidc: oidc({ postLogoutRedirectUris: [long(2001)] }) }, mentions: ["post_logout_redirect_uris"] },
  // Additional origins.
  { what: "origin with a path", app: { name: "x", oidc: oidc({ additionalOrigins: ["https://a.example/path"] }) }, mentions: ["additional_origins"] },
  { what: "origin with a query", app: { name: "x", oidc: oidc({ additionalOrigins: ["https://a.example?x=1"] }) }, mentions: ["additional_origins"] },
  { what: "origin with a fragment", app: { name: "x", oidc: oidc({ additionalOrigins: ["https://a.example#x"] }) }, mentions: ["additional_origins"] },
  { what: "origin without scheme", app: { name: "x", oidc: oidc({ additionalOrigins: ["a.example"] }) }, mentions: ["additional_origins"] },
  { what: "origin wildcard", app: { name: "x", oidc: oidc({ additionalOrigins: ["*"] }) }, mentions: ["additional_origins"] },
  { what: "origin of a custom scheme", app: { name: "x", oidc: oidc({ additionalOrigins: ["com.example.app://host"] }) }, mentions: ["additional_origins"] },
  { what: "empty origin", app: { name: "x", oidc: oidc({ additionalOrigins: [""] }) }, mentions: ["additional_origins"] },
  {
    what: "duplicate origins",
    app: { name: "x", oidc: oidc({ additionalOrigins: ["https://a.example", "https://a.example"] }) },
    mentions: ["additional_origins"],
  },
  {
    what: "101 origins",
    app: { name: "x", oidc: oidc({ additionalOrigins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example`) }) },
    mentions: ["additional_origins"],
  },
  // Clock skew.
  { what: "clock skew of 6 s", app: { name: "x", oidc: oidc({ clockSkew: "6s" }) }, mentions: ["clock_skew"] },
  { what: "clock skew just over 5 s", app: { name: "x", oidc: oidc({ clockSkew: "5.001s" }) }, mentions: ["clock_skew"] },
  { what: "negative clock skew", app: { name: "x", oidc: oidc({ clockSkew: "-1s" }) }, mentions: ["clock_skew"] },
];

/** Configurations at the edges of the rules that are fine. */
const GOOD: { what: string; app: JsonObject }[] = [
  { what: "name of 1 character", app: { name: "a", api: {} } },
  { what: "name of 200 characters", app: { name: "n".repeat(200), api: {} } },
  { what: "no redirect URI", app: { name: "No Redirects", oidc: { responseTypes: [CODE] } } },
  { what: "https redirect with port and query", app: { name: "Query", oidc: oidc({ redirectUris: ["https://app.example:8443/cb?x=1&y=2"] }) } },
  {
    what: "http redirect in dev mode",
    app: {
      name: "Dev",
      oidc: oidc({ devMode: true, redirectUris: ["http://app.example/cb", "http://localhost:3000/cb"], postLogoutRedirectUris: ["http://app.example/bye"] }),
    },
  },
  {
    what: "http redirect of a user agent app in dev mode",
    app: { name: "Dev Spa", oidc: oidc({ appType: USER_AGENT, devMode: true, redirectUris: ["http://spa.example/cb"] }) },
  },
  { what: "native loopback 127.0.0.1", app: { name: "Native 4", oidc: oidc({ appType: NATIVE, redirectUris: ["http://127.0.0.1:51004/cb"] }) } },
  { what: "native loopback [::1]", app: { name: "Native 6", oidc: oidc({ appType: NATIVE, redirectUris: ["http://[::1]:51004/cb"] }) } },
  {
    what: "native loopback localhost",
    app: { name: "Native Host", oidc: oidc({ appType: NATIVE, redirectUris: ["http://localhost/cb"], postLogoutRedirectUris: ["http://localhost/bye"] }) },
  },
  {
    what: "native custom schemes",
    app: {
      name: "Native Scheme",
      oidc: oidc({
        appType: NATIVE,
        redirectUris: ["com.example.app:/cb", "com.example.app://callback/path"],
        postLogoutRedirectUris: ["com.example.app:/bye"],
      }),
    },
  },
  { what: "native https", app: { name: "Native Https", oidc: oidc({ appType: NATIVE, redirectUris: ["https://app.example/cb"] }) } },
  { what: "exactly 100 redirects and post-logout URIs", app: { name: "Hundred", oidc: oidc({ redirectUris: many(100), postLogoutRedirectUris: many(100) }) } },
  { what: "redirect of 2000 characters", app: { name: "Long", oidc: oidc({ redirectUris: [long(2000)] }) } },
  {
    what: "origins with ports and http",
    app: { name: "Origins", oidc: oidc({ additionalOrigins: ["https://a.example", "https://b.example:8443", "http://localhost:3000"] }) },
  },
  {
    what: "exactly 100 origins",
    app: { name: "Hundred Origins", oidc: oidc({ additionalOrigins: Array.from({ length: 100 }, (_, i) => `https://a${i}.example`) }) },
  },
  { what: "clock skew 0 s", app: { name: "Skew 0", oidc: oidc({ clockSkew: "0s" }) } },
  { what: "clock skew 5 s", app: { name: "Skew 5", oidc: oidc({ clockSkew: "5s" }) } },
  { what: "code flow with refresh tokens", app: { name: "Refresh", oidc: oidc({ grantTypes: [AUTH_CODE, REFRESH] }) } },
  {
    what: "every response type with code, implicit and refresh grants",
    app: { name: "Hybrid", oidc: oidc({ responseTypes: [CODE, ID_TOKEN, ID_TOKEN_TOKEN], grantTypes: [AUTH_CODE, IMPLICIT, REFRESH] }) },
  },
  { what: "implicit only", app: { name: "Implicit", oidc: oidc({ responseTypes: [ID_TOKEN_TOKEN], grantTypes: [IMPLICIT] }) } },
  { what: "code with token exchange", app: { name: "Exchange", oidc: oidc({ grantTypes: [AUTH_CODE, TOKEN_EXCHANGE] }) } },
  { what: "explicit WEB app type", app: { name: "Web", oidc: oidc({ appType: WEB }) } },
];

describe.each(DATABASE_KINDS)("app configuration rules (%s)", (kind) => {
  let server: TestServer;
  let apps: Client;
  let project: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    apps = appClient(server.baseUrl, server.adminToken);
    project = await createProject(server.baseUrl, server.adminToken, "Validation Project");
  });
  afterAll(() => server?.close());

  const count = async () =>
    (
      await server.service.store.db
        .selectFrom("apps")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .executeTakeFirstOrThrow()
    ).n;

  it.each(BAD)("refuses $what with InvalidArgument, creating nothing", async ({ app, mentions }) => {
    const before = await count();
    const r = await apps.call("CreateApp", { projectId: project, app });
    expect(r).toMatchObject({ ok: false, code: Code.InvalidArgument });
    for (const m of mentions) expect(r.ok ? "" : r.message).toContain(m);
    expect(await count()).toBe(before);
  });

  it("refuses the same over REST with 400 and creates nothing", async () => {
    const rest = appClient(server.baseUrl, server.adminToken, "rest");
    const before = await count();
    for (const { what, app, mentions } of BAD) {
      const r = await rest.call("CreateApp", { projectId: project, app });
      expect(r, what).toMatchObject({ ok: false, code: Code.InvalidArgument, httpStatus: 400 });
      for (const m of mentions) expect(r.ok ? "" : r.message, what).toContain(m);
    }
    // Both kinds at once cannot even be decoded.
    const both = await rest.call("CreateApp", { projectId: project, app: { name: "Both", oidc: oidc(), api: {} } });
    expect(both).toMatchObject({ ok: false, code: Code.InvalidArgument, httpStatus: 400 });
    expect(await count()).toBe(before);
  });

  it.each(GOOD)("accepts $what and returns it as given", async ({ app }) => {
    const made = await apps.ok("CreateApp", { projectId: project, app });
    const got = (await apps.ok("GetApp", { id: made.details.id })).app;
    expect(got.app.name).toBe(app.name);
    if (app.oidc) expect(got.app.oidc).toMatchObject(app.oidc as JsonObject);
    else expect(got.app.api).toEqual({ authMethodType: "API_AUTH_METHOD_TYPE_BASIC" });
  });

  it("checks patches by the same rules: the limits of lists, names and clock skew", async () => {
    const made = await apps.ok("CreateApp", { projectId: project, app: { name: "Patch Limits", oidc: oidc() } });
    const id = made.details.id as string;
    const before = (await apps.ok("GetApp", { id })).app;
    const bad: [JsonObject, string][] = [
      [{ name: "" }, "name"],
      [{ name: "n".repeat(201) }, "name"],
      [{ oidc: { redirectUris: { values: many(101) } } }, "redirect_uris"],
      [{ oidc: { redirectUris: { values: [long(2001)] } } }, "redirect_uris"],
      [{ oidc: { redirectUris: { values: ["https://app.example/cb#f"] } } }, "redirect_uris"],
      [{ oidc: { redirectUris: { values: ["http://app.example/cb"] } } }, "redirect_uris"],
      [{ oidc: { postLogoutRedirectUris: { values: ["/bye"] } } }, "post_logout_redirect_uris"],
      [{ oidc: { additionalOrigins: { values: ["https://a.example/x"] } } }, "additional_origins"],
      [{ oidc: { responseTypes: { values: [] } } }, "response_types"],
      [{ oidc: { responseTypes: { values: [ID_TOKEN] }, grantTypes: { values: [AUTH_CODE] } } }, "IMPLICIT"],
      [{ oidc: { grantTypes: { values: [AUTH_CODE, IMPLICIT] } } }, "IMPLICIT"],
      [{ oidc: { grantTypes: { values: [] } } }, "AUTHORIZATION_CODE"],
      [{ oidc: { appType: "OIDC_APP_TYPE_UNSPECIFIED" } }, "app_type"],
      [{ oidc: { authMethodType: "OIDC_AUTH_METHOD_TYPE_UNSPECIFIED" } }, "auth_method_type"],
      [{ oidc: { accessTokenType: "OIDC_TOKEN_TYPE_UNSPECIFIED" } }, "access_token_type"],
      [{ oidc: { clockSkew: "5.5s" } }, "clock_skew"],
      [{ oidc: { clockSkew: "-0.5s" } }, "clock_skew"],
      [{ oidc: { devMode: true, redirectUris: { values: ["com.example.app:/cb"] } } }, "redirect_uris"],
    ];
    for (const [app, field] of bad) {
      const r = await apps.call("PatchApp", { id, app });
      expect(r, JSON.stringify(app).slice(0, 200)).toMatchObject({ ok: false, code: Code.InvalidArgument, message: expect.stringContaining(field) });
    }
    expect((await apps.ok("GetApp", { id })).app).toEqual(before);
    // Dev mode on first, then http redirects; turning dev mode off again is refused while they are there.
    expect((await apps.ok("PatchApp", { id, app: { oidc: { devMode: true } } })).details.sequence).toBe("2");
    expect((await apps.ok("PatchApp", { id, app: { oidc: { redirectUris: { values: ["http://app.example/cb"] } } } })).details.sequence).toBe("3");
    const off = await apps.call("PatchApp", { id, app: { oidc: { devMode: false } } });
    expect(off).toMatchObject({ ok: false, code: Code.InvalidArgument, message: expect.stringContaining("redirect_uris") });
    expect((await apps.ok("PatchApp", { id, app: { oidc: { devMode: false, redirectUris: { values: ["https://app.example/cb"] } } } })).details.sequence).toBe(
      "4",
    );
    // The API kind has nothing to validate but its enum.
    const api = await apps.ok("CreateApp", { projectId: project, app: { name: "Api Patch Limits", api: {} } });
    expect(await apps.call("PatchApp", { id: api.details.id, app: { api: { authMethodType: "API_AUTH_METHOD_TYPE_UNSPECIFIED" } } })).toMatchObject({
      ok: false,
      code: Code.InvalidArgument,
    });
  });
});
