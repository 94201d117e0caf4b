import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_CODE, BASIC, BEARER, JWT, REFRESH, WEB, appClient, createProject, oidc } from "../apps/helpers.js";
import { spawnPeer } from "../support/child-service.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, humanUser, uniqueName } from "../users/helpers.js";
import { Browser, formWith } from "./browser.js";

const PASSWORD = "Corr3ct-horse!";
const PLATFORM_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
const SCOPE = `openid offline_access ${PLATFORM_SCOPE}`;
const RP = "https://rp.example";
const CB = `${RP}/cb`;
const LOGGED_OUT = `${RP}/logged-out`;
/** Far below the principal cache's 10 s (src/rpc/interceptors/authentication.ts): only the access epoch explains a refusal this soon. */
const WITHIN_MS = 2_000;

interface App {
  label: string;
  clientId: string;
  clientSecret: string;
  config: client.Configuration;
}

/**
 * Access tokens that node-oidc-provider ends with their whole grant — at end session, when a
 * rotated refresh token or a redeemed code comes back — and those our revocation endpoint
 * ends, are refused by the resource APIs at once, although the APIs cache the principal of
 * a token (src/rpc/interceptors/authentication.ts): on the process that ended them, and on
 * PostgreSQL on a second process whose cache was just filled with them (access epoch,
 * src/oidc/adapters/ended-tokens.ts).
 */
describe.each(DATABASE_KINDS)("revoked tokens are refused by the resource APIs at once (%s)", (kind) => {
  let server: TestServer;
  let peer: Awaited<ReturnType<typeof spawnPeer>> | undefined;
  let alice: { id: string; name: string };
  /** JWT access tokens, and opaque ones: their rows are of other models. */
  let apps: App[];

  const base = () => server.baseUrl;
  /** Where the API calls go: the process the tokens end on, and the second one when there is one. */
  const origins = () => [base(), ...(peer ? [peer.baseUrl] : [])];

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "100000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000" });
    alice = { name: uniqueName("alice"), id: "" };
    alice.id = await new Users(server).create(humanUser(alice.name, { password: PASSWORD }));
    const projectId = await createProject(base(), server.adminToken, uniqueName("revoked"));
    const meta = (await client.discovery(new URL(base()), "discovery", undefined, undefined, { execute: [client.allowInsecureRequests] })).serverMetadata();
    apps = [];
    for (const [label, accessTokenType] of [
      ["jwt", JWT],
      ["opaque", BEARER],
    ] as const) {
      const made = await appClient(base(), server.adminToken).ok("CreateApp", {
        projectId,
        app: {
          name: label,
          oidc: oidc({
            redirectUris: [CB],
            postLogoutRedirectUris: [LOGGED_OUT],
            appType: WEB,
            authMethodType: BASIC,
            grantTypes: [AUTH_CODE, REFRESH],
            accessTokenType,
          }),
        },
      });
      const config = new client.Configuration(meta, made.clientId, { client_secret: made.clientSecret }, client.ClientSecretBasic(made.clientSecret));
      client.allowInsecureRequests(config);
      apps.push({ label, clientId: made.clientId, clientSecret: made.clientSecret, config });
    }
    if (kind === "postgres") {
      peer = await spawnPeer(server.config.database as { url: string }, { LOG_LEVEL: "info" });
      // Until it listens, the peer bypasses its caches and nothing here would be proven.
      for (let waited = 0; !peer.output().includes("listening for access changes"); waited += 50) {
        if (waited > 10_000) throw new Error(`the peer never listened for access changes:\n${peer.output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 120_000);
  afterAll(async () => {
    await peer?.cleanup();
    await server?.close();
  });

  /** The code flow through the login pages; the browser keeps its session. */
  async function signIn(app: App, b = new Browser(base())) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = new URL("/oauth/v2/authorize", base());
    const query = {
      client_id: app.clientId,
      redirect_uri: CB,
      response_type: "code",
      scope: SCOPE,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    };
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    let page = await b.open(url);
    if (!page.left) {
      page = await b.submit(formWith(page.html, "loginName"), { loginName: alice.name }, page.url);
      page = await b.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
    }
    expect(page.left, page.html).toBe(true);
    const callback = new URL(page.url);
    const redeem = () => client.authorizationCodeGrant(app.config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    return { tokens: await redeem(), redeem, browser: b };
  }

  /** GetUser of oneself with the token, on one process. */
  const getSelf = async (origin: string, token: string) =>
    (await fetch(`${origin}/resources/v3alpha/users/${alice.id}`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** Every process accepts the tokens, and so holds their principals in its cache. */
  async function warm(tokens: Record<string, string>): Promise<void> {
    for (const origin of origins())
      for (const [label, token] of Object.entries(tokens)) expect(await getSelf(origin, token), `${label} at ${origin}`).toBe(200);
  }

  /** Every process refuses the tokens: at once the one they ended on, within WITHIN_MS the other. */
  async function refused(tokens: Record<string, string>): Promise<void> {
    const [own, other] = origins();
    for (const [label, token] of Object.entries(tokens)) {
      expect(await getSelf(own!, token), `${label} (same process)`).toBe(401);
      if (!other) continue;
      const started = Date.now();
      let status: number;
      while ((status = await getSelf(other, token)) !== 401 && Date.now() - started < WITHIN_MS) await new Promise((r) => setTimeout(r, 25));
      expect(status, `${label} (other process, after ${Date.now() - started} ms)`).toBe(401);
    }
  }

  it("at end session (sign-out): the access tokens of every grant of the browser session", async () => {
    const first = await signIn(apps[0]!);
    const second = await signIn(apps[1]!, first.browser);
    const tokens = { jwt: first.tokens.access_token, opaque: second.tokens.access_token };
    await warm(tokens);

    const b = first.browser;
    const url = new URL("/oidc/v1/end_session", base());
    url.searchParams.set("id_token_hint", first.tokens.id_token!);
    url.searchParams.set("post_logout_redirect_uri", LOGGED_OUT);
    const confirm = await b.open(url);
    expect(confirm.status, confirm.html).toBe(200);
    const done = await b.submit(formWith(confirm.html, "op.logoutForm"), { logout: "yes" }, confirm.url);
    expect(done.url).toBe(LOGGED_OUT);
    await refused(tokens);
  });

  it("when a rotated refresh token comes back: the access tokens of its grant, the rotation's too", async () => {
    for (const app of apps) {
      const { tokens } = await signIn(app);
      const rotated = await client.refreshTokenGrant(app.config, tokens.refresh_token!);
      const issued = { [`${app.label} of the code`]: tokens.access_token, [`${app.label} of the refresh`]: rotated.access_token };
      await warm(issued);
      await expect(client.refreshTokenGrant(app.config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
      await refused(issued);
    }
  });

  it("when a redeemed code comes back: the access tokens of its grant", async () => {
    for (const app of apps) {
      const { tokens, redeem } = await signIn(app);
      await warm({ [app.label]: tokens.access_token });
      await expect(redeem()).rejects.toMatchObject({ error: "invalid_grant" });
      await refused({ [app.label]: tokens.access_token });
    }
  });

  it("at the revocation endpoint: an access token, and the access tokens of a revoked refresh token", async () => {
    const revoke = async (app: App, token: string) => {
      const res = await fetch(`${base()}/oauth/v2/revoke`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ token }),
      });
      expect(res.status, await res.text()).toBe(200);
    };
    for (const app of apps) {
      const byAccessToken = await signIn(app);
      await warm({ [app.label]: byAccessToken.tokens.access_token });
      await revoke(app, byAccessToken.tokens.access_token);
      await refused({ [`${app.label} revoked itself`]: byAccessToken.tokens.access_token });

      const byRefreshToken = await signIn(app);
      await warm({ [app.label]: byRefreshToken.tokens.access_token });
      await revoke(app, byRefreshToken.tokens.refresh_token!);
      await refused({ [`${app.label} of a revoked refresh token`]: byRefreshToken.tokens.access_token });
    }
  });
});
