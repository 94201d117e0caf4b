import type { JsonObject } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startSamlIdp, type SamlIdp, type SamlPerson, type Spoil } from "../support/saml-idp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { Users, humanUser, uniqueName } from "../users/helpers.js";
import { Browser, parseForms, type Page } from "./browser.js";
import { RP, authorize, createRp, providerForm, postsTo, tokensOf as tokensOfApp, type App } from "./external-helpers.js";
import { CHROMIUM, launchChromium } from "../support/page-checks.js";

/*
 * SAML 2.0 sign-in on the login pages (issue 38) against an identity provider the tests start
 * (samlify in its IdP role, test/support/saml-idp.ts): the provider's button sends the browser
 * to the identity provider by HTTP-Redirect or HTTP-POST (signed when asked), its response is
 * posted cross-site to the provider's ACS, posted again from the service's origin so the
 * browser binding is checked, and the person goes on as after any provider. Every check is
 * shown to fail alone: an unsigned, foreign-signed, expired, replayed, wrong-audience,
 * wrong-recipient or unanswered response is refused, where the same flow unspoiled succeeds.
 */

const en = TEXTS.en;

describe.each(DATABASE_KINDS)("SAML login (%s)", (kind) => {
  let server: TestServer;
  let upstream: SamlIdp;
  let rp: App;
  const warnings: string[] = [];
  const idp = { redirect: "", post: "", linking: "", transient: "" };

  beforeAll(async () => {
    [server, upstream] = await Promise.all([
      startTestServer(kind, { PLATFORM_LOGIN_RATE_PER_IP: "100000", PLATFORM_AUDIT_SIGNIN_BURST: "100000" }, { warnings }),
      startSamlIdp(),
    ]);
    rp = await createRp(server);
    const idps = idpClient(server.baseUrl, server.adminToken);
    const create = async (name: string, options: JsonObject, config: JsonObject) =>
      (await idps.ok("CreateSAMLIDP", { idp: { idp: { name, options }, config: { metadataXml: upstream.metadataXml(), ...config } } })).details.id as string;
    idp.redirect = await create("SAML redirect", { isAutoCreation: true }, { binding: "SAML_BINDING_REDIRECT" });
    idp.post = await create(
      "SAML post",
      { isAutoCreation: true },
      {
        metadataXml: upstream.metadataXml({ wantSignedRequests: true }),
        binding: "SAML_BINDING_POST",
        withSignedRequest: true,
        nameIdFormat: "SAML_NAME_ID_FORMAT_PERSISTENT",
      },
    );
    idp.linking = await create("SAML linking", { autoLinking: "AUTO_LINKING_OPTION_USERNAME" }, { binding: "SAML_BINDING_REDIRECT" });
    idp.transient = await create(
      "SAML transient",
      { isAutoCreation: true },
      { binding: "SAML_BINDING_REDIRECT", nameIdFormat: "SAML_NAME_ID_FORMAT_TRANSIENT", transientMappingAttributeName: "employeeNumber" },
    );
  }, 120_000);
  afterAll(() => Promise.all([server?.close(), upstream?.close()]));

  const tokensOf = (request: { verifier: string; state: string }, page: Page) => tokensOfApp(rp, request, page);

  /**
   * From an authorization request through the provider's button to the identity provider's
   * page, which holds the form that posts its response to the ACS.
   */
  async function toIdp(idpId: string, person: SamlPerson, spoil?: Spoil, b = new Browser(server.baseUrl)) {
    upstream.next = { person, ...(spoil && { spoil }) };
    const request = await authorize(server, rp);
    const login = await b.open(request.url);
    expect(login.status, login.html).toBe(200);
    const button = providerForm(login, idpId);
    expect(button, login.html).toBeDefined();
    let page = await b.submit(button!, {}, login.url);
    if (!page.left) {
      // HTTP-POST: the service's page posts the AuthnRequest to the identity provider.
      const [form] = parseForms(page.html);
      expect(form!.action.startsWith(`${upstream.url}/sso`), page.html).toBe(true);
      expect(Object.keys(form!.fields).sort()).toEqual(["RelayState", "SAMLRequest"]);
      page = await b.submit(form!, {}, page.url, true);
    } else {
      expect(page.url.startsWith(`${upstream.url}/sso?SAMLRequest=`)).toBe(true);
      page = await b.open(page.url);
    }
    expect(page.status, page.html).toBe(200);
    const [form] = parseForms(page.html);
    return { b, request, form: form!, idpPage: page };
  }

  /** The identity provider's form posted cross-site, and the service's page that posts it again from its origin. */
  async function toAcs(flow: Awaited<ReturnType<typeof toIdp>>) {
    const first = await flow.b.submit(flow.form, {}, flow.idpPage.url, true);
    expect(first.status, first.html).toBe(200);
    const [again] = parseForms(first.html);
    expect(again!.action).toBe(new URL(flow.form.action).pathname);
    return flow.b.submit(again!, {}, first.url);
  }

  const signIn = async (idpId: string, person: SamlPerson, spoil?: Spoil) => {
    const flow = await toIdp(idpId, person, spoil);
    return { ...flow, done: await toAcs(flow) };
  };

  const refusedFor = async (reason: RegExp, spoil: Spoil, idpId = idp.redirect) => {
    const before = warnings.length;
    const { done } = await signIn(idpId, { nameId: `nobody-${Math.random()}` }, spoil);
    expect(done.status, done.html).toBe(502);
    expect(done.html).toContain(en.externalFailed);
    expect(warnings.slice(before).join("\n")).toMatch(reason);
  };

  it("signs a person in by HTTP-Redirect: a user created from the assertion (amr fed), the same user the next time", async () => {
    const nameId = `ann-${kind}@saml.example`;
    const person = { nameId, attributes: { givenName: "Ann", sn: "Arbor", email: nameId, preferredLanguage: "fr-CH" } };
    const first = await signIn(idp.redirect, person);
    expect(upstream.requests.at(-1)).toMatchObject({ binding: "redirect", signed: false });
    const tokens = await tokensOf(first.request, first.done);
    const sub = tokens.claims()!.sub;
    expect(tokens.claims()!.amr).toEqual(["fed"]);
    const created = await new Users(server).get(sub);
    expect(created.human.profile).toMatchObject({ givenName: "Ann", familyName: "Arbor", displayName: "Ann Arbor", preferredLanguage: "fr" });
    expect(created.human.email).toMatchObject({ address: nameId });
    expect(created.human.email.isVerified ?? false).toBe(false);
    const again = await signIn(idp.redirect, person);
    expect((await tokensOf(again.request, again.done)).claims()).toMatchObject({ sub, amr: ["fed"] });
  });

  it("signs a person in by HTTP-POST with a signed request asking for a persistent NameID", async () => {
    const person = { nameId: `persistent-${kind}-7f3a`, attributes: { mail: `post-${kind}@saml.example`, givenName: "Pat", surname: "Post" } };
    const { request, done } = await signIn(idp.post, person);
    expect(upstream.requests.at(-1)).toMatchObject({ binding: "post", signed: true, nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" });
    const sub = (await tokensOf(request, done)).claims()!.sub;
    expect((await new Users(server).get(sub)).human.profile).toMatchObject({ givenName: "Pat", familyName: "Post" });
  });

  it("identifies a person by the mapping attribute when the NameID is transient", async () => {
    const person = (n: number) => ({
      nameId: `_transient${n}`,
      attributes: { employeeNumber: `E-${kind}-42`, mail: `t-${kind}@saml.example`, givenName: "Tia", sn: "T" },
    });
    const first = await signIn(idp.transient, person(1));
    const sub = (await tokensOf(first.request, first.done)).claims()!.sub;
    const second = await signIn(idp.transient, person(2));
    expect((await tokensOf(second.request, second.done)).claims()!.sub).toBe(sub);
    await refusedFor(/no employeeNumber attribute/, {}, idp.transient);
  });

  it("links an existing account by username when the provider auto-links", async () => {
    const username = uniqueName("linda");
    const local = await new Users(server).create(humanUser(username, { password: "Corr3ct-horse!" }, { givenName: "Linda", familyName: "Local" }));
    const { done } = await signIn(idp.linking, { nameId: `linda-${kind}`, attributes: { uid: username } });
    expect(done.status, done.html).toBe(200);
    const link = parseForms(done.html).find((f) => "password" in f.fields);
    expect(link, done.html).toBeDefined();
    expect(local).toBeTruthy();
  });

  it("refuses an unsigned response", () => refusedFor(/FAILED_TO_VERIFY_SIGNATURE/, { unsigned: true }));
  it("refuses a response signed by a key the metadata does not name", () => refusedFor(/invalid signature|FAILED_TO_VERIFY_SIGNATURE/, { foreignKey: true }));
  it("refuses an expired assertion", () => refusedFor(/ERR_SUBJECT_UNCONFIRMED|EXPIRED/, { expiredMs: 10 * 60_000 }));
  it("refuses an assertion for another audience", () => refusedFor(/AUDIENCE/, { audience: "https://other-sp.example/metadata" }));
  it("refuses an assertion for another recipient", () => refusedFor(/RECIPIENT|DESTINATION/, { recipient: "https://other-sp.example/acs" }));
  it("refuses a response that answers another request", () => refusedFor(/INRESPONSETO/, { inResponseTo: "_another-request" }));

  it("accepts an assertion once: posted again it is refused, and so is its ID in another flow", async () => {
    const person = { nameId: `once-${kind}@saml.example`, attributes: { givenName: "Olga", sn: "Once" } };
    const assertionId = `_once-${kind}-${Date.now()}`;
    const flow = await toIdp(idp.redirect, person, { assertionId });
    const done = await toAcs(flow);
    expect(done.left, done.html).toBe(true);
    // The same post again (its binding cookie is gone, so posted again from the service's page): its flow is over.
    const replay = await toAcs(flow);
    expect(replay.status, replay.html).toBe(400);
    expect(replay.html).toContain(en.loginExpired);
    // The same assertion ID in a response to another request of another flow.
    await refusedFor(/ERR_REPLAYED_ASSERTION/, { assertionId });
  });

  it("refuses a response delivered to a browser that did not start the flow", async () => {
    const flow = await toIdp(idp.redirect, { nameId: `victim-${kind}` });
    const attacker = new Browser(server.baseUrl);
    const first = await attacker.submit(flow.form, {}, flow.idpPage.url, true);
    const [again] = parseForms(first.html);
    const done = await attacker.submit(again!, {}, first.url);
    expect(done.status, done.html).toBe(400);
    expect(done.html).toContain(en.externalOtherBrowser);
  });
});

/*
 * The same round trip in Chromium, the identity provider's page on another site (127.0.0.1,
 * the service on localhost): its POST to the ACS carries no binding cookie (SameSite=Lax); the
 * page the ACS answers posts again from the service's origin, with it.
 */
describe.skipIf(!existsSync(CHROMIUM)).each(DATABASE_KINDS)(`SAML in Chromium (%s; skipped when ${CHROMIUM} is missing)`, (kind) => {
  let server: TestServer;
  let upstream: SamlIdp;
  let rp: App;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let idpId: string;

  beforeAll(async () => {
    [server, upstream, browser] = await Promise.all([startTestServer(kind), startSamlIdp(), launchChromium()]);
    rp = await createRp(server);
    idpId = (
      await idpClient(server.baseUrl, server.adminToken).ok("CreateSAMLIDP", {
        idp: {
          idp: { name: "Corporate SSO", options: { isAutoCreation: true } },
          config: { metadataXml: upstream.metadataXml(), binding: "SAML_BINDING_POST" },
        },
      })
    ).details.id as string;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), upstream?.close()]);
  });

  it("signs in: the cross-site POST comes without the binding cookie, the re-post from the service's page with it", async () => {
    const name = uniqueName("chromium");
    upstream.next = { person: { nameId: `${name}@saml.example`, attributes: { givenName: "Chro", sn: "Mium" } } };
    const request = await authorize(server, rp);
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    const acs = `${server.baseUrl}/idps/${idpId}/saml/acs`;
    const posts = postsTo(page, acs);
    let back: URL;
    try {
      const atRp = page.waitForRequest((r) => r.url().startsWith(`${RP}?`), { timeout: 20_000 });
      await page.goto(request.url);
      await page.getByRole("button", { name: "Corporate SSO" }).click();
      back = new URL((await atRp).url());
    } finally {
      await context.close();
    }
    expect(await Promise.all(posts)).toEqual([
      { from: upstream.url, bound: false, status: 200 },
      { from: "null", bound: true, status: 303 },
    ]);
    const sub = (await tokensOfApp(rp, request, { status: 303, url: back.href, headers: new Headers(), html: "", left: true, hops: [] })).claims()!.sub;
    expect((await new Users(server).get(sub)).human.profile).toMatchObject({ givenName: "Chro", familyName: "Mium" });
  }, 60_000);
});
