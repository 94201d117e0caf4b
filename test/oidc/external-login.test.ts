import { PlatformLoginSettings } from "../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { createHash } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { AUTH_CODE, BASIC, BEARER, POST, WEB } from "../apps/helpers.js";
import { DEACTIVATE, idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { protocolClient } from "../support/clients.js";
import { Users, humanUser, ok, uniqueName } from "../users/helpers.js";
import { Browser, alertText, formWith, parseForms, type Page } from "./browser.js";
import { authorize, createApp, createRp, providerForm, tokensOf as tokensOfApp, type App } from "./external-helpers.js";

/*
 * External login (src/oidc/login/external/) against a real upstream: a second instance of this
 * service, whose own login pages the upstream user signs in on. The downstream service reaches
 * it on 127.0.0.1, so it runs with PLATFORM_OUTBOUND_ALLOW_PRIVATE=true; the upstream runs
 * without it, and refuses to call an internal address when one of its providers points there.
 */

const PASSWORD = "Corr3ct-horse!";
const en = TEXTS.en;

describe.each(DATABASE_KINDS)("external login (%s)", (kind) => {
  let up: TestServer;
  let down: TestServer;
  let callbackUri: string;
  /** The downstream's relying party. */
  let rp: App;
  /** Upstream apps for the downstream's providers: BASIC (OpenID Connect) and POST (OAuth). */
  let upBasic: { clientId: string; clientSecret: string };
  let upPost: { clientId: string; clientSecret: string };
  const idp = { autoCreate: "", linkByEmail: "", oauth: "", deactivated: "" };
  let carol: { name: string; email: string };
  let dave: { name: string; email: string };
  let erin: { name: string; email: string };
  let daveLocal: string;

  /** Signs in at the upstream's pages when it asks (a browser with an upstream session is sent straight back). */
  async function upstreamLogin(ub: Browser, url: string, loginName: string): Promise<Page> {
    let page = await ub.open(url);
    if (page.left) return page;
    expect(page.status, page.html).toBe(200);
    page = await ub.submit(formWith(page.html, "loginName"), { loginName }, page.url);
    expect(page.status, page.html).toBe(200);
    return ub.submit(formWith(page.html, "password"), { password: PASSWORD }, page.url);
  }

  /**
   * A downstream authorization request, the provider's button, the upstream login and the
   * return to the callback; the page the downstream answers after it.
   */
  async function viaProvider(idpId: string, ub: Browser, loginName: string, b = new Browser(down.baseUrl)) {
    const request = await authorize(down, rp);
    let page = await b.open(request.url);
    expect(page.status, page.html).toBe(200);
    const button = providerForm(page, idpId);
    expect(button, page.html).toBeDefined();
    page = await b.submit(button!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    const upstream = new URL(page.url);
    expect(upstream.origin + upstream.pathname).toBe(`${up.baseUrl}/oauth/v2/authorize`);
    expect(upstream.searchParams.get("code_challenge_method")).toBe("S256");
    expect(upstream.searchParams.get("redirect_uri")).toBe(callbackUri);
    const back = await upstreamLogin(ub, page.url, loginName);
    expect(back.left, back.html).toBe(true);
    expect(back.url.startsWith(`${callbackUri}?`)).toBe(true);
    return { b, request, callback: back.url, page: await b.open(back.url) };
  }

  const tokensOf = (request: { verifier: string; state: string }, page: Page) => tokensOfApp(rp, request, page);

  beforeAll(async () => {
    [up, down] = await Promise.all([
      startTestServer(kind),
      startTestServer(kind, { PLATFORM_OUTBOUND_ALLOW_PRIVATE: "true", PLATFORM_LOGIN_RATE_PER_IP: "100000", PLATFORM_LOGIN_RATE_PER_LOGIN_NAME: "100000" }),
    ]);
    callbackUri = `${down.baseUrl}/ui/login/idp/callback`;
    upBasic = await createApp(up, "downstream-oidc", {
      redirectUris: [callbackUri],
      appType: WEB,
      authMethodType: BASIC,
      grantTypes: [AUTH_CODE],
      accessTokenType: BEARER,
      devMode: true,
    });
    upPost = await createApp(up, "downstream-oauth", {
      redirectUris: [callbackUri],
      appType: WEB,
      authMethodType: POST,
      grantTypes: [AUTH_CODE],
      accessTokenType: BEARER,
      devMode: true,
    });
    const upUsers = new Users(up);
    const person = async (prefix: string, given: string) => {
      const name = uniqueName(prefix);
      const email = `${name}@shared.example`;
      await upUsers.create(humanUser(name, { password: PASSWORD, email: { address: email, isVerified: true } }, { givenName: given, familyName: "Upstream" }));
      return { name, email };
    };
    carol = await person("carol", "Carol");
    dave = await person("dave", "Dave");
    erin = await person("erin", "Erin");

    const downUsers = new Users(down);
    daveLocal = await downUsers.create(
      humanUser(uniqueName("davelocal"), { password: PASSWORD, email: { address: dave.email, isVerified: true } }, { givenName: "Dave", familyName: "Local" }),
    );
    rp = await createRp(down);

    const idps = idpClient(down.baseUrl, down.adminToken);
    const oidcIdp = async (name: string, options: JsonObject, extra: JsonObject = {}) =>
      (
        await idps.ok("CreateOIDCIDP", {
          idp: {
            idp: { name, options, ...extra },
            config: { clientId: upBasic.clientId, clientSecret: upBasic.clientSecret, issuer: up.baseUrl, scopes: ["openid", "profile", "email"] },
          },
        })
      ).details.id as string;
    idp.autoCreate = await oidcIdp("Upstream", { isAutoCreation: true, isAutoUpdate: true });
    idp.linkByEmail = await oidcIdp("Upstream linking", { autoLinking: "AUTO_LINKING_OPTION_EMAIL" });
    idp.deactivated = await oidcIdp("Upstream off", { isAutoCreation: true }, { statePolicy: DEACTIVATE });
    idp.oauth = (
      await idps.ok("CreateOAuthIDP", {
        idp: {
          idp: { name: "Upstream OAuth", options: { isAutoCreation: true } },
          config: {
            clientId: upPost.clientId,
            clientSecret: upPost.clientSecret,
            scopes: ["openid", "profile", "email"],
            authorizationEndpoint: `${up.baseUrl}/oauth/v2/authorize`,
            tokenEndpoint: `${up.baseUrl}/oauth/v2/token`,
            userEndpoint: `${up.baseUrl}/oidc/v1/userinfo`,
            idAttribute: "sub",
          },
        },
      })
    ).details.id as string;
  }, 180_000);
  afterAll(async () => {
    await Promise.all([up?.close(), down?.close()]);
  });

  it("shows a button for every active provider of the login's organization, none for a deactivated one", async () => {
    const b = new Browser(down.baseUrl);
    const page = await b.open((await authorize(down, rp)).url);
    expect(page.status).toBe(200);
    for (const id of [idp.autoCreate, idp.linkByEmail, idp.oauth]) {
      const form = providerForm(page, id);
      expect(form, id).toBeDefined();
      expect(form!.method).toBe("post");
      expect(form!.fields.csrf).toBe(formWith(page.html, "loginName").fields.csrf);
    }
    expect(providerForm(page, idp.deactivated)).toBeUndefined();
    expect(page.html).toContain(`<button type="submit">${en.externalSignInWith.replace("{name}", "Upstream")}</button>`);
    // Plain forms: no inline script (the page's only script is the service's passkey file).
    for (const m of page.html.matchAll(/<script\b([^>]*)>/gi)) expect(m[1]).toMatch(/type="application\/json"|src="\/ui\/login\/assets\//);
  });

  it("shows no buttons and starts nothing while the organization's login settings turn external login off", async () => {
    const setting = (change: JsonObject) =>
      protocolClient(PlatformLoginSettings, "grpc", down.baseUrl).call(
        "SetLoginSettings",
        { settings: { allowExternalIdp: change }, ctx: { orgId: down.defaultOrgId } },
        down.adminToken,
      );
    expect(await setting({ set: false })).toMatchObject({ ok: true });
    try {
      const b = new Browser(down.baseUrl);
      const page = await b.open((await authorize(down, rp)).url);
      expect(page.status).toBe(200);
      expect(providerForm(page, idp.autoCreate)).toBeUndefined();
      // A form posted by hand is refused as well.
      const start = await b.submit(
        {
          method: "post",
          action: `${new URL(page.url).pathname}/idp/start`,
          fields: { csrf: formWith(page.html, "loginName").fields.csrf!, idpId: idp.autoCreate },
          visible: [],
        },
        {},
        page.url,
      );
      expect(start.left).toBe(false);
      expect(start.status).toBeGreaterThanOrEqual(400);
      expect(start.status).toBeLessThan(500);
    } finally {
      expect(await setting({ reset: true })).toMatchObject({ ok: true });
    }
    const again = await new Browser(down.baseUrl).open((await authorize(down, rp)).url);
    expect(providerForm(again, idp.autoCreate)).toBeDefined();
  });

  it("creates a user automatically, signs them in (amr fed), and reuses the link at the next login", async () => {
    const ub = new Browser(up.baseUrl);
    const first = await viaProvider(idp.autoCreate, ub, carol.name);
    const tokens = await tokensOf(first.request, first.page);
    const sub = tokens.claims()!.sub;
    expect(tokens.claims()!.amr).toEqual(["fed"]);
    const created = await new Users(down).get(sub);
    expect(created.human.profile).toMatchObject({ givenName: "Carol", familyName: "Upstream" });
    expect(created.human.email).toMatchObject({ address: carol.email, isVerified: true });
    expect(created.username.startsWith(`${carol.name}@`)).toBe(true);

    // A new downstream browser; the upstream one has a session and comes straight back.
    const second = await viaProvider(idp.autoCreate, ub, carol.name);
    expect((await tokensOf(second.request, second.page)).claims()!).toMatchObject({ sub, amr: ["fed"] });
    const found = ok(await new Users(down).call("SearchUsers", { filters: [{ email: { value: carol.email } }] }));
    expect(found.result.length).toBe(1);

    // Chosen again on the first browser (account selection, no new sign-in): still fed.
    const request = await authorize(down, rp);
    let page = await first.b.open(`${request.url}&prompt=select_account`);
    const choice = parseForms(page.html).find((f) => f.fields.accountId === sub);
    expect(choice, page.html).toBeDefined();
    page = await first.b.submit(choice!, {}, page.url);
    expect((await tokensOf(request, page)).claims()!).toMatchObject({ sub, amr: ["fed"] });
  });

  it("refuses a replayed callback and a state it never issued, with an error page", async () => {
    const ub = new Browser(up.baseUrl);
    const done = await viaProvider(idp.autoCreate, ub, carol.name);
    expect(done.page.left).toBe(true);
    const replay = await done.b.open(done.callback);
    expect(replay.status).toBe(400);
    expect(alertText(replay.html)).toBe(en.loginExpired);
    const foreign = await new Browser(down.baseUrl).open(`/ui/login/idp/callback?state=${"a".repeat(43)}&code=abc`);
    expect(foreign.status).toBe(400);
    expect(alertText(foreign.html)).toBe(en.loginExpired);
    expect(foreign.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  /** The upstream authorization URL of a login started in a downstream browser, not followed. */
  async function startedLogin(b: Browser, idpId = idp.autoCreate) {
    const request = await authorize(down, rp);
    let page = await b.open(request.url);
    const uid = new URL(page.url).pathname.split("/").pop()!;
    page = await b.submit(providerForm(page, idpId)!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    const state = new URL(page.url).searchParams.get("state")!;
    return { request, uid, upstreamUrl: page.url, state };
  }

  /** The name of a flow's binding cookie (src/oidc/login/external/browser-binding.ts). */
  const bindingName = (state: string) => `platform_idp_${createHash("sha256").update(state).digest("base64url").slice(0, 22)}`;

  it("refuses the callback in a browser that did not start the login: the login-CSRF account takeover", async () => {
    // The victim: a person upstream whose downstream account must never reach the attacker.
    const victim = uniqueName("victim");
    const email = `${victim}@victim.example`;
    await new Users(up).create(humanUser(victim, { password: PASSWORD, email: { address: email, isVerified: true } }, { givenName: "Vic", familyName: "Tim" }));
    // (1) The attacker starts an external login in their own browser and keeps the upstream URL.
    const attacker = new Browser(down.baseUrl);
    const started = await startedLogin(attacker);
    // (2) The victim, signed in upstream, is made to open it; the upstream sends the victim's
    // browser, which holds none of the downstream's cookies, back with the victim's code.
    const victimUpstream = new Browser(up.baseUrl);
    const back = await upstreamLogin(victimUpstream, started.upstreamUrl, victim);
    expect(back.left, back.html).toBe(true);
    expect(new URL(back.url).searchParams.get("state")).toBe(started.state);
    const victimDown = new Browser(down.baseUrl);
    const delivered = await victimDown.open(back.url);
    expect(delivered.left).toBe(false);
    expect(delivered.status).toBe(400);
    expect(delivered.hops).toHaveLength(1);
    expect(alertText(delivered.html)).toBe(en.externalOtherBrowser);
    // (3) The attacker continues their interaction: nothing was attached to it.
    const cont = await attacker.open(`/ui/login/${started.uid}/idp`);
    expect(cont.left).toBe(false);
    expect(cont.status).toBe(400);
    expect(alertText(cont.html)).toBe(en.loginExpired);
    // The state was consumed: the attacker's own browser cannot deliver the code afterwards either.
    const replayed = await attacker.open(back.url);
    expect(replayed.status).toBe(400);
    expect(alertText(replayed.html)).toBe(en.loginExpired);
    // And no account was created for, or linked to, the victim's upstream identity.
    expect(ok(await new Users(down).call("SearchUsers", { filters: [{ email: { value: email } }] })).result ?? []).toEqual([]);
  });

  it("refuses the callback with another flow's binding cookie, and clears the flow's cookie", async () => {
    const b = new Browser(down.baseUrl);
    const first = await startedLogin(b);
    const second = await startedLogin(b);
    const bindings = b.cookieNames().filter((n) => n.startsWith("platform_idp_"));
    expect(bindings).toHaveLength(2);
    const back = await upstreamLogin(new Browser(up.baseUrl), first.upstreamUrl, carol.name);
    // The first flow's cookie name with the second flow's value.
    const cookies = Object.fromEntries(
      b
        .cookieHeader("/ui/login/idp/callback")
        .split("; ")
        .map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)]),
    );
    const [firstName, secondName] = [bindingName(first.state), bindingName(second.state)];
    expect(Object.keys(cookies).sort()).toEqual([firstName, secondName].sort());
    const forged = await fetch(back.url, { redirect: "manual", headers: { accept: "text/html", cookie: `${firstName}=${cookies[secondName]}` } });
    expect(forged.status).toBe(400);
    expect(alertText(await forged.text())).toBe(en.externalOtherBrowser);
    expect(forged.headers.getSetCookie().some((l) => l.startsWith(`${firstName}=;`) && /Max-Age=0/.test(l))).toBe(true);
    // The second flow still works in the browser that started it, which then drops its cookie.
    const back2 = await upstreamLogin(new Browser(up.baseUrl), second.upstreamUrl, carol.name);
    const page = await b.open(back2.url);
    await tokensOf(second.request, page);
    expect(b.cookieNames()).not.toContain(secondName);
  });

  it("links an existing user by verified email after their password (amr pwd and fed); the link signs in directly afterwards (fed)", async () => {
    const ub = new Browser(up.baseUrl);
    const flow = await viaProvider(idp.linkByEmail, ub, dave.name);
    expect(flow.page.status, flow.page.html).toBe(200);
    const form = formWith(flow.page.html, "password");
    // Without manual linking only the proposed account can be linked: its name is not asked.
    expect(form.visible).toEqual(["password"]);
    const wrong = await flow.b.submit(form, { password: "not-the-password" }, flow.page.url);
    expect(wrong.status, alertText(wrong.html)).toBe(401);
    expect(alertText(wrong.html)).toBe(en.wrongPassword);
    const linked = await flow.b.submit(formWith(wrong.html, "password"), { password: PASSWORD, loginName: "someone-else" }, wrong.url);
    const tokens = await tokensOf(flow.request, linked);
    expect(tokens.claims()!).toMatchObject({ sub: daveLocal, amr: ["pwd", "fed"] });

    const again = await viaProvider(idp.linkByEmail, ub, dave.name);
    expect((await tokensOf(again.request, again.page)).claims()!).toMatchObject({ sub: daveLocal, amr: ["fed"] });
  });

  it("signs in with an OAuth provider (user endpoint, id attribute sub, client_secret_post)", async () => {
    const flow = await viaProvider(idp.oauth, new Browser(up.baseUrl), erin.name);
    const sub = (await tokensOf(flow.request, flow.page)).claims()!.sub;
    const created = await new Users(down).get(sub);
    expect(created.human.email.address).toBe(erin.email);
  });

  it("does not call an internal address without PLATFORM_OUTBOUND_ALLOW_PRIVATE: a clear error page", async () => {
    // The upstream service runs without it; one of its providers points at the downstream on 127.0.0.1.
    const target = await createApp(down, "for-upstream", {
      redirectUris: [`${up.baseUrl}/ui/login/idp/callback`],
      appType: WEB,
      authMethodType: BASIC,
      grantTypes: [AUTH_CODE],
      accessTokenType: BEARER,
      devMode: true,
    });
    const id = (
      await idpClient(up.baseUrl, up.adminToken).ok("CreateOIDCIDP", {
        idp: {
          idp: { name: "Internal", options: { isAutoCreation: true } },
          config: { clientId: target.clientId, clientSecret: target.clientSecret, issuer: down.baseUrl },
        },
      })
    ).details.id as string;
    const upRp = await createRp(up);
    const b = new Browser(up.baseUrl);
    let page = await b.open((await authorize(up, upRp)).url);
    const button = providerForm(page, id);
    expect(button, page.html).toBeDefined();
    page = await b.submit(button!, {}, page.url);
    expect(page.left).toBe(false);
    expect(page.status).toBe(502);
    expect(alertText(page.html)).toBe(en.externalUnreachable);
    expect(page.html).toContain("<code>refused</code>");
  });
});
