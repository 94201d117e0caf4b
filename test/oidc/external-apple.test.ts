import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import * as client from "openid-client";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { PlatformIDPIntents } from "../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { PlatformMemberships } from "../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { idpClient } from "../idps/helpers.js";
import { protocolClient } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { CHROMIUM, launchChromium } from "../support/page-checks.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { machineUser, ok, uniqueName, Users } from "../users/helpers.js";
import { Browser, parseForms, type Page } from "./browser.js";
import { authorize, createRp, postsTo, providerForm, RP, tokensOf, type App } from "./external-helpers.js";
import { startFakeApple, type FakeApple } from "./fake-oidc-upstreams.js";

/*
 * External login with Sign in with Apple, whose fixed issuer (https://appleid.apple.com)
 * PLATFORM_APPLE_URL points at a fake on 127.0.0.1 (fake-oidc-upstreams.ts): the client
 * secret is a JWT signed with the team's key per code redeemed, and Apple comes back with a
 * cross-site POST (response_mode=form_post), which carries no SameSite=Lax cookie: the
 * callback has the browser post it again from its own origin, where the binding cookie goes.
 */

describe.each(DATABASE_KINDS)("external login with Apple (%s)", (kind) => {
  let apple: FakeApple;
  let down: TestServer;
  let rp: App;
  let idpId: string;

  beforeAll(async () => {
    apple = await startFakeApple();
    down = await startTestServer(kind, apple.env);
    rp = await createRp(down);
    const made = await idpClient(down.baseUrl, down.adminToken).ok("CreateAppleIDP", {
      idp: {
        idp: { name: "Apple", options: { isAutoCreation: true } },
        config: { clientId: apple.clientId, teamId: apple.teamId, keyId: apple.keyId, privateKey: apple.privateKey },
      },
    });
    idpId = made.details.id as string;
  }, 120_000);
  afterAll(async () => {
    await down?.close();
    await apple?.close();
  });

  function person(extra: JWTPayload = {}) {
    const name = uniqueName("apple");
    // Apple's ID tokens say email_verified as a string.
    return { sub: `001234.${name}`, email: `${name}@privaterelay.appleid.com`, email_verified: "true", is_private_email: "true", ...extra };
  }

  /** The button, and Apple's form_post page (from its own site): its form, not yet posted. */
  async function toApple(claims: JWTPayload, user?: FakeApple["user"]) {
    apple.claims = claims;
    apple.user = user;
    const b = new Browser(down.baseUrl);
    const request = await authorize(down, rp);
    let page = await b.open(request.url);
    page = await b.submit(providerForm(page, idpId)!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    const upstream = new URL(page.url);
    expect(upstream.origin + upstream.pathname).toBe(`${apple.url}/auth/authorize`);
    expect(upstream.searchParams.get("response_mode")).toBe("form_post");
    expect(upstream.searchParams.get("scope")).toBe("openid name email");
    const applePage = await new Browser(apple.url).open(page.url);
    expect(applePage.status, applePage.html).toBe(200);
    const [form] = parseForms(applePage.html);
    expect(form!.action).toBe(`${down.baseUrl}/ui/login/idp/callback`);
    return { b, request, form: form!, applePage };
  }

  /** Apple's page posts its form cross-site; the callback's answer posts it again from the service's origin. */
  async function postBack(b: Browser, flow: Awaited<ReturnType<typeof toApple>>): Promise<Page> {
    const first = await b.submit(flow.form, {}, flow.applePage.url, true);
    expect(first.status, first.html).toBe(200);
    const again = parseForms(first.html)[0]!;
    expect(again).toMatchObject({ method: "post", action: "/ui/login/idp/callback", fields: { ...flow.form.fields, platform_resubmitted: "1" } });
    expect(first.html).toMatch(/<script src="\/ui\/login\/assets\/auto-submit\.[\w-]+\.js" defer><\/script>/);
    return b.submit(again, {}, first.url);
  }

  async function signedIn(claims: JWTPayload, user?: FakeApple["user"]) {
    const flow = await toApple(claims, user);
    const page = await postBack(flow.b, flow);
    const sub = (await tokensOf(rp, flow.request, page)).claims()!.sub;
    return new Users(down).get(sub);
  }

  it("signs in through the form_post callback: the name from the first sign-in's user field, the email from the ID token", async () => {
    const claims = person();
    const refusals = apple.refusals.length;
    const user = await signedIn(claims, { name: { firstName: "Tim", lastName: "Apfel" }, email: "ignored@elsewhere.example" });
    expect(apple.refusals.length, apple.refusals.join()).toBe(refusals);
    expect(user.username).toBe(claims.email);
    expect(user.human.profile).toMatchObject({ givenName: "Tim", familyName: "Apfel", displayName: "Tim Apfel" });
    expect(user.human.email).toEqual({ address: claims.email, isVerified: true });
    // Later sign-ins carry no user field: the same account, linked.
    expect((await signedIn(claims)).details.id).toBe(user.details.id);
  });

  it("the binding holds: a form_post delivered to another browser is refused after its re-post", async () => {
    const flow = await toApple(person(), undefined);
    const other = new Browser(down.baseUrl);
    const page = await postBack(other, flow);
    expect(page.status, page.html).toBe(400);
    expect(page.html).toContain(TEXTS.en.externalOtherBrowser);
    // The state is spent: the browser that started the flow cannot use it any more either.
    const late = await flow.b.submit(flow.form, {}, flow.applePage.url);
    expect(late.status).toBe(400);
    expect(late.html).toContain(TEXTS.en.loginExpired);
  });

  it("a browser that sends the cookie with Apple's POST goes on without the re-post", async () => {
    const claims = person();
    const flow = await toApple(claims);
    const page = await flow.b.submit(flow.form, {}, flow.applePage.url);
    expect((await tokensOf(rp, flow.request, page)).claims()!.sub).toBeTruthy();
  });

  it("a cancelled sign-in comes back as Apple's error and says so", async () => {
    const flow = await toApple(person());
    const page = await postBack(flow.b, { ...flow, form: { ...flow.form, fields: { state: flow.form.fields.state!, error: "user_cancelled_authorize" } } });
    expect(page.status).toBe(400);
    expect(page.html).toContain(TEXTS.en.externalCancelled);
  });

  it("finishes an intent of the API through the same form_post callback, with the name Apple posted", async () => {
    const users = new Users(down);
    const id = await users.create(machineUser(uniqueName("login-ui")));
    ok(
      await protocolClient(PlatformMemberships, "grpc", down.baseUrl).call(
        "CreateMembership",
        { membership: { userId: id, roles: ["LOGIN_CLIENT"] } },
        down.adminToken,
      ),
    );
    const ui = (await users.pat(id)).token;
    const intents = protocolClient(PlatformIDPIntents, "grpc", down.baseUrl);
    const started = ok(
      await intents.call(
        "StartIDPIntent",
        { idpId, successUrl: "https://login.example/ui/idp/success", failureUrl: "https://login.example/ui/idp/failure" },
        ui,
      ),
    );
    const claims = person();
    apple.claims = claims;
    apple.user = { name: { firstName: "Ida", lastName: "Intent" }, email: claims.email };
    const applePage = await new Browser(apple.url).open(started.authUrl as string);
    const [form] = parseForms(applePage.html);
    const b = new Browser(down.baseUrl);
    const page = await postBack(b, { b, request: undefined as never, form: form!, applePage });
    expect(page.left, page.html).toBe(true);
    const back = new URL(page.url);
    expect(back.origin + back.pathname).toBe("https://login.example/ui/idp/success");
    const retrieved = ok(await intents.call("RetrieveIDPIntent", { id: back.searchParams.get("id"), idpIntentToken: back.searchParams.get("token") }, ui));
    expect(retrieved.idpInformation).toMatchObject({
      idpId,
      externalUserId: claims.sub,
      email: claims.email,
      emailVerified: true,
      givenName: "Ida",
      familyName: "Intent",
    });
  });

  it("signs a client secret Apple takes; with a key Apple does not know, the code is refused", async () => {
    const idps = idpClient(down.baseUrl, down.adminToken);
    const otherKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    await idps.ok("PatchAppleIDP", { id: idpId, idp: { config: { privateKey: otherKey } } });
    try {
      const refusals = apple.refusals.length;
      const flow = await toApple(person());
      const page = await postBack(flow.b, flow);
      expect(page.status).toBe(502);
      expect(page.html).toContain(TEXTS.en.externalFailed);
      expect(apple.refusals.slice(refusals)).toEqual([expect.stringMatching(/^client_secret: .*signature/)]);
    } finally {
      await idps.ok("PatchAppleIDP", { id: idpId, idp: { config: { privateKey: apple.privateKey } } });
    }
    expect((await signedIn(person())).username).toMatch(/^apple/);
  });
});

/*
 * The same round trip in Chromium, Apple's page on another site (the fake is on 127.0.0.1, the
 * test server on localhost): what the browser itself sends, not a model of it. Its POST from Apple's page
 * carries no binding cookie (SameSite=Lax); the page the callback answers posts again, with it.
 */
describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`Apple's form_post in Chromium (%s; skipped when ${CHROMIUM} is missing)`, (kind) => {
  let apple: FakeApple;
  let down: TestServer;
  let rp: App;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    apple = await startFakeApple();
    [down, browser] = await Promise.all([startTestServer(kind, apple.env), launchChromium()]);
    rp = await createRp(down);
    await idpClient(down.baseUrl, down.adminToken).ok("CreateAppleIDP", {
      idp: {
        idp: { name: "Sign in with Apple", options: { isAutoCreation: true } },
        config: { clientId: apple.clientId, teamId: apple.teamId, keyId: apple.keyId, privateKey: apple.privateKey },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await down?.close();
    await apple?.close();
  });

  it("signs in: the cross-site POST comes without the binding cookie, the re-post from the service's page with it", async () => {
    const name = uniqueName("chromium");
    apple.claims = { sub: `001.${name}`, email: `${name}@privaterelay.appleid.com`, email_verified: "true" };
    apple.user = { name: { firstName: "Chro", lastName: "Mium" }, email: `${name}@privaterelay.appleid.com` };
    const request = await authorize(down, rp);
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    // What the callback was posted from, whether the binding cookie went along, and what it answered.
    const callbacks = postsTo(page, `${down.baseUrl}/ui/login/idp/callback`);
    let back: URL;
    try {
      // The relying party's redirect URI is only seen, never loaded (rp.example does not resolve).
      const atRp = page.waitForRequest((r) => r.url().startsWith(`${RP}?`), { timeout: 20_000 });
      await page.goto(request.url);
      await page.getByRole("button", { name: "Sign in with Apple" }).click();
      back = new URL((await atRp).url());
    } finally {
      await context.close();
    }
    // Apple's page: no cookie, answered the page that posts again; the service's page (its
    // Referrer-Policy no-referrer makes the Origin "null"): the cookie, on to the login.
    expect(await Promise.all(callbacks)).toEqual([
      { from: apple.url, bound: false, status: 200 },
      { from: "null", bound: true, status: 303 },
    ]);
    const tokens = await client.authorizationCodeGrant(rp.config, back, {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      idTokenExpected: true,
    });
    const user = await new Users(down).get(tokens.claims()!.sub);
    expect(user.human.profile).toMatchObject({ givenName: "Chro", familyName: "Mium" });
    expect(user.human.email).toEqual({ address: `${name}@privaterelay.appleid.com`, isVerified: true });
  }, 60_000);
});
