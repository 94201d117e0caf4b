import { Code } from "@connectrpc/connect";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_BASIC, AUTH_CODE, BEARER, POST, WEB, appClient, oidc } from "../apps/helpers.js";
import { clients as grantClients, type Clients } from "../grants/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, createOrg, humanUser, uniqueName } from "../users/helpers.js";
import { Browser, formWith, type Page } from "./browser.js";

/*
 * Black-box tests of project grants at sign-in: organization A's project is granted to
 * organization B, whose owner gives B's users roles of it; their tokens carry the roles with B
 * as the organization, and the project's project_role_check lets in only users with a grant
 * that counts (none made under a deactivated project grant), also on single sign-on.
 */

const PASSWORD = "Corr3ct-horse!";
const ROLES = "urn:platform:iam:org:project:roles";
const CB = "https://rp.example/cb";

const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** A project of A with role check, granted to B, and what signs in to it. */
interface Granted {
  projectId: string;
  /** Code flow, POST, opaque access tokens, roles in the ID token. */
  app: { clientId: string; config: client.Configuration };
  /** An API app of the project, to introspect with. */
  api: { clientId: string; clientSecret: string };
  projectGrantId: string;
  /** Bob's grant of "editor", made by B's owner under the project grant. */
  bobGrantId: string;
}

describe.each(DATABASE_KINDS)("project grants and the project's role check at sign-in (%s)", (kind) => {
  let server: TestServer;
  let meta: client.ServerMetadata;
  let c: Clients;
  let orgA: { id: string; primary: string };
  let orgB: { id: string; primary: string };
  /** ORG_OWNER of B (a machine user of the default organization with the membership). */
  let ownerB: string;
  /** Users of B: Bob gets grants, Carol never does; Dave is a user of A without a grant. */
  let bob: { id: string; name: string };
  let carol: { id: string; name: string };
  let dave: { id: string; name: string };
  /** The project most tests share; tests that change its grant for good make their own. */
  let shared: Granted;

  const base = () => server.baseUrl;

  async function grantedProject(): Promise<Granted> {
    const made = await c.projects.ok("CreateProject", {
      project: { name: uniqueName("granted"), projectRoleAssertion: true, projectRoleCheck: true },
      ctx: { orgId: orgA.id },
    });
    const projectId = made.details.id as string;
    for (const key of ["viewer", "editor", "admin"]) await c.projects.ok("AddProjectRole", { projectId, role: { key, displayName: key } });
    const apps = appClient(base(), server.adminToken);
    const oidcApp = await apps.ok("CreateApp", {
      projectId,
      app: {
        name: "rp",
        oidc: oidc({
          redirectUris: [CB],
          appType: WEB,
          authMethodType: POST,
          grantTypes: [AUTH_CODE],
          accessTokenType: BEARER,
          idTokenRoleAssertion: true,
        }),
      },
    });
    const config = new client.Configuration(meta, oidcApp.clientId, { client_secret: oidcApp.clientSecret }, client.ClientSecretPost(oidcApp.clientSecret));
    client.allowInsecureRequests(config);
    const apiApp = await apps.ok("CreateApp", { projectId, app: { name: "api", api: { authMethodType: API_BASIC } } });
    const projectGrantId = (await c.grants.ok("CreateProjectGrant", { projectId, grant: { grantedOrgId: orgB.id, roleKeys: ["viewer", "editor"] } })).details
      .id as string;
    const bobGrantId = (await c.grants.ok("CreateUserGrant", { projectId, grant: { userId: bob.id, roleKeys: ["editor"] }, ctx: { orgId: orgB.id } }, ownerB))
      .details.id as string;
    return {
      projectId,
      app: { clientId: oidcApp.clientId, config },
      api: { clientId: apiApp.clientId, clientSecret: apiApp.clientSecret },
      projectGrantId,
      bobGrantId,
    };
  }

  async function start(p: Granted, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = new URL("/oauth/v2/authorize", base());
    for (const [k, v] of Object.entries({
      client_id: p.app.clientId,
      redirect_uri: CB,
      response_type: "code",
      scope: "openid profile",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...extra,
    }))
      url.searchParams.set(k, v);
    return { url: url.href, state, verifier };
  }

  /** An authorization request of the project's app, signed in on the login pages; where it left the server. */
  async function signIn(p: Granted, loginName: string, b = new Browser(base())) {
    const s = await start(p);
    let page = await b.open(s.url);
    expect(page.url, page.html).toMatch(new RegExp(`^${base()}/ui/login/[^/]+$`));
    page = await b.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    return { s, page, browser: b };
  }

  const redirected = (page: Page) => {
    expect(page.left, `${page.status} ${page.url}\n${page.html}`).toBe(true);
    const u = new URL(page.url);
    expect(u.origin + u.pathname).toBe(CB);
    return Object.fromEntries(u.searchParams);
  };

  /** The whole code flow for a user; the tokens, and the browser with its session. */
  async function codeFlow(p: Granted, loginName: string) {
    const { s, page, browser } = await signIn(p, loginName);
    expect(redirected(page).code).toBeTruthy();
    const tokens = await client.authorizationCodeGrant(p.app.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
    return { tokens, browser };
  }

  /** A sign-in the role check refuses: access_denied at the redirect URI, with the request's state. */
  async function expectDenied(p: Granted, loginName: string, b?: Browser) {
    const { s, page } = await signIn(p, loginName, b);
    expect(redirected(page)).toMatchObject({ error: "access_denied", state: s.state, iss: base() });
  }

  async function userinfo(token: string) {
    const res = await fetch(`${base()}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  async function introspect(p: Granted, token: string) {
    const res = await fetch(`${base()}/oauth/v2/introspect`, {
      method: "POST",
      headers: { authorization: basicAuth(p.api.clientId, p.api.clientSecret), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.active).toBe(true);
    return body;
  }

  /** Bob's roles as every token and endpoint shows them: B, which made the grant, is the organization. */
  const editorOfB = () => ({ editor: { [orgB.id]: orgB.primary } });

  async function expectRoles(p: Granted, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, roles: object | undefined) {
    const sources = { id: tokens.claims()!, userinfo: await userinfo(tokens.access_token), introspection: await introspect(p, tokens.access_token) };
    for (const [label, claims] of Object.entries(sources)) {
      expect(claims[ROLES], label).toEqual(roles);
      // The ID token carries the roles of all projects only; userinfo and introspection those of the project too.
      if (label !== "id") expect(claims[`urn:platform:iam:org:project:${p.projectId}:roles`], label).toEqual(roles);
    }
  }

  const setRoleCheck = (p: Granted, projectRoleCheck: boolean) => c.projects.ok("PatchProject", { id: p.projectId, project: { projectRoleCheck } });

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "100000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000" });
    meta = (await client.discovery(new URL(base()), "discovery", undefined, undefined, { execute: [client.allowInsecureRequests] })).serverMetadata();
    c = grantClients(base(), server.adminToken);
    orgA = await createOrg(server, uniqueName("Owner A"));
    orgB = await createOrg(server, uniqueName("Granted B"));
    ownerB = (await server.createUser({ roles: [{ context: "org", contextId: orgB.id, roles: ["ORG_OWNER"] }] })).token;
    const users = new Users(server);
    const human = async (prefix: string, orgId: string) => {
      const name = uniqueName(prefix);
      return { name, id: await users.create(humanUser(name, { password: PASSWORD }), { orgId }) };
    };
    bob = await human("bob", orgB.id);
    carol = await human("carol", orgB.id);
    dave = await human("dave", orgA.id);
    shared = await grantedProject();
  }, 120_000);
  afterAll(() => server?.close());

  it("gives Bob the roles B granted him, with B (which made the grant) as the organization, in the ID token, userinfo and introspection", async () => {
    const grant = (await c.grants.ok("GetUserGrant", { id: shared.bobGrantId })).grant;
    expect(grant).toMatchObject({
      projectId: shared.projectId,
      projectGrantId: shared.projectGrantId,
      userOrgId: orgB.id,
      details: { resourceOwner: { id: orgB.id } },
    });
    const { tokens } = await codeFlow(shared, bob.name);
    expect(tokens.claims()!.sub).toBe(bob.id);
    await expectRoles(shared, tokens, editorOfB());
  });

  it("refuses users without a grant on the project (of B, and of A, the project's own): access_denied at the redirect URI", async () => {
    await expectDenied(shared, carol.name);
    await expectDenied(shared, dave.name);
  });

  it("lets Carol in at once when the project's role check is turned off (no roles claim), and refuses her again when it is back on", async () => {
    await setRoleCheck(shared, false);
    try {
      const { tokens } = await codeFlow(shared, carol.name);
      expect(tokens.claims()!.sub).toBe(carol.id);
      await expectRoles(shared, tokens, undefined);
    } finally {
      await setRoleCheck(shared, true);
    }
    await expectDenied(shared, carol.name);
  });

  it("counts Bob's grant for nothing while the project grant is deactivated: sign-in refused, earlier tokens without roles; back on reactivation", async () => {
    const before = await codeFlow(shared, bob.name);
    await c.grants.ok("DeactivateProjectGrant", { id: shared.projectGrantId });
    try {
      await expectDenied(shared, bob.name);
      const claims = { userinfo: await userinfo(before.tokens.access_token), introspection: await introspect(shared, before.tokens.access_token) };
      for (const [label, seen] of Object.entries(claims)) {
        expect(seen, label).toMatchObject({ sub: bob.id });
        expect(seen, label).not.toHaveProperty([ROLES]);
      }
      // The user grant itself stays.
      expect((await c.grants.ok("GetUserGrant", { id: shared.bobGrantId })).grant.grant.roleKeys).toEqual(["editor"]);
    } finally {
      await c.grants.ok("ReactivateProjectGrant", { id: shared.projectGrantId });
    }
    expect((await userinfo(before.tokens.access_token))[ROLES]).toEqual(editorOfB());
    const { tokens } = await codeFlow(shared, bob.name);
    await expectRoles(shared, tokens, editorOfB());
  });

  it("refuses a single sign-on after the project grant is deactivated: no login page, access_denied from the browser's session", async () => {
    const { browser } = await codeFlow(shared, bob.name);
    // The session signs Bob in again without a page while the grant counts…
    let s = await start(shared);
    let page = await browser.open(s.url);
    expect(redirected(page).code).toBeTruthy();
    await c.grants.ok("DeactivateProjectGrant", { id: shared.projectGrantId });
    try {
      s = await start(shared);
      page = await browser.open(s.url);
      expect(
        page.hops.some((h) => h.url.includes("/ui/login/")),
        JSON.stringify(page.hops),
      ).toBe(false);
      expect(redirected(page)).toMatchObject({ error: "access_denied", state: s.state });
    } finally {
      await c.grants.ok("ReactivateProjectGrant", { id: shared.projectGrantId });
    }
    // …and again once it counts again.
    s = await start(shared);
    page = await browser.open(s.url);
    expect(redirected(page).code).toBeTruthy();
  });

  it("asks for a sign-in with prompt=login even when the browser's user has no grant: Bob, who has one, then gets in", async () => {
    await setRoleCheck(shared, false);
    let browser: Browser;
    try {
      ({ browser } = await codeFlow(shared, carol.name));
    } finally {
      await setRoleCheck(shared, true);
    }
    // Carol's single sign-on is refused…
    let s = await start(shared);
    expect(redirected(await browser.open(s.url))).toMatchObject({ error: "access_denied", state: s.state });
    // …but a request for a new sign-in shows the login pages, where another person may sign in.
    s = await start(shared, { prompt: "login" });
    let page = await browser.open(s.url);
    expect(page.left, page.url).toBe(false);
    page = await browser.submit(formWith(page.html, "loginName"), { loginName: bob.name }, page.url);
    page = await browser.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    // The provider ends Carol's session before Bob's sign-in resumes the request (a form the page posts itself).
    if (!page.left) page = await browser.submit(formWith(page.html, "logout"), {}, page.url);
    expect(redirected(page).code).toBeTruthy();
    const tokens = await client.authorizationCodeGrant(shared.app.config, new URL(page.url), { pkceCodeVerifier: s.verifier, expectedState: s.state });
    expect(tokens.claims()!.sub).toBe(bob.id);
    await expectRoles(shared, tokens, editorOfB());
  });

  it("takes a role the project grant no longer gives out of Bob's grant; a grant without roles still passes the role check (no roles claim)", async () => {
    const p = await grantedProject();
    await c.grants.ok("PatchProjectGrant", { id: p.projectGrantId, grant: { roleKeys: ["viewer"] } });
    expect((await c.grants.ok("GetProjectGrant", { id: p.projectGrantId })).grant.roleKeys).toEqual(["viewer"]);
    const grant = (await c.grants.ok("GetUserGrant", { id: p.bobGrantId })).grant;
    expect(grant.projectGrantId).toBe(p.projectGrantId);
    expect(grant.grant.roleKeys ?? []).toEqual([]);
    const { tokens } = await codeFlow(p, bob.name);
    expect(tokens.claims()!.sub).toBe(bob.id);
    await expectRoles(p, tokens, undefined);
  });

  it("removes Bob's grant with the project grant: GetUserGrant is NotFound and his sign-in is refused", async () => {
    const p = await grantedProject();
    const { tokens } = await codeFlow(p, bob.name);
    await c.grants.ok("DeleteProjectGrant", { id: p.projectGrantId });
    expect(await c.grants.call("GetUserGrant", { id: p.bobGrantId })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await c.grants.call("GetProjectGrant", { id: p.projectGrantId })).toMatchObject({ ok: false, code: Code.NotFound });
    await expectDenied(p, bob.name);
    expect(await userinfo(tokens.access_token)).not.toHaveProperty([ROLES]);
  });
});
