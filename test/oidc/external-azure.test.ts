import type { JsonObject } from "@bufbuild/protobuf";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEXTS } from "../../src/oidc/login/view/texts/index.js";
import { idpClient } from "../idps/helpers.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { uniqueName, Users } from "../users/helpers.js";
import { Browser } from "./browser.js";
import { authorize, createRp, providerForm, tokensOf, type App } from "./external-helpers.js";
import { startFakeAzure, type FakeAzure } from "./fake-oidc-upstreams.js";

/*
 * External login with Azure AD / Entra ID providers, whose fixed endpoints
 * (https://login.microsoftonline.com/<tenant>/v2.0) PLATFORM_AZURE_AD_URL points at a fake
 * on 127.0.0.1 (fake-oidc-upstreams.ts). The multi-tenant endpoints' tokens carry their
 * user's tenant in `iss`, checked against their `tid`; a tenant's own endpoint has one issuer.
 */

const TENANT_A = "3f2e4b6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const TENANT_B = "9b8a7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
const CONSUMERS = "9188040d-6c67-45c5-b8c6-0e3d5ba3f9c2";

describe.each(DATABASE_KINDS)("external login with Azure AD (%s)", (kind) => {
  let azure: FakeAzure;
  let down: TestServer;
  let rp: App;
  const idp = { common: "", tenant: "", byDomain: "", unverified: "", consumers: "", organizations: "" };

  beforeAll(async () => {
    azure = await startFakeAzure();
    azure.domains[TENANT_A] = "contoso.onmicrosoft.com";
    down = await startTestServer(kind, azure.env);
    rp = await createRp(down);
    const idps = idpClient(down.baseUrl, down.adminToken);
    const create = async (name: string, tenant: JsonObject, isEmailVerified = true) =>
      (
        await idps.ok("CreateAzureADIDP", {
          idp: {
            idp: { name, options: { isAutoCreation: true } },
            config: { clientId: azure.clientId, clientSecret: azure.clientSecret, tenant, isEmailVerified },
          },
        })
      ).details.id as string;
    idp.common = await create("Microsoft", { tenantType: "AZURE_AD_TENANT_TYPE_COMMON" });
    idp.tenant = await create("Contoso by ID", { tenantId: TENANT_A });
    idp.byDomain = await create("Contoso by domain", { tenantId: "contoso.onmicrosoft.com" });
    idp.unverified = await create("Microsoft unverified", { tenantType: "AZURE_AD_TENANT_TYPE_COMMON" }, false);
    idp.consumers = await create("Microsoft personal", { tenantType: "AZURE_AD_TENANT_TYPE_CONSUMERS" });
    idp.organizations = await create("Microsoft work", { tenantType: "AZURE_AD_TENANT_TYPE_ORGANIZATIONS" });
  }, 120_000);
  afterAll(async () => {
    await down?.close();
    await azure?.close();
  });

  /** A person of a tenant: the claims Microsoft's ID token has (no email_verified). */
  function person(tid: string, extra: JWTPayload = {}) {
    const name = uniqueName("ms");
    return {
      sub: `sub-${name}`,
      oid: `oid-${name}`,
      tid,
      name: "Ada Lovelace",
      preferred_username: `${name}@contoso.example`,
      email: `${name}@contoso.example`,
      ...extra,
    };
  }

  /** A downstream login through a provider's button while `claims` are signed in at Microsoft: the page after the callback. */
  async function via(idpId: string, claims: JWTPayload) {
    azure.claims = claims;
    const b = new Browser(down.baseUrl);
    const request = await authorize(down, rp);
    let page = await b.open(request.url);
    page = await b.submit(providerForm(page, idpId)!, {}, page.url);
    expect(page.left, page.html).toBe(true);
    const upstream = new URL(page.url);
    const back = await new Browser(azure.url).open(page.url);
    expect(back.left, back.html).toBe(true);
    return { request, upstream, page: await b.open(back.url) };
  }

  async function signedIn(idpId: string, claims: JWTPayload) {
    const flow = await via(idpId, claims);
    const sub = (await tokensOf(rp, flow.request, flow.page)).claims()!.sub;
    return { user: await new Users(down).get(sub), upstream: flow.upstream };
  }

  function refused(page: { status: number; left: boolean; html: string }) {
    expect(page.left, page.html).toBe(false);
    expect(page.status, page.html).toBe(502);
    expect(page.html).toContain(TEXTS.en.externalFailed);
  }

  it("common: a token of the user's tenant (iss of its tid) signs in; the address counts as verified as configured", async () => {
    const claims = person(TENANT_A);
    const { user, upstream } = await signedIn(idp.common, claims);
    expect(upstream.origin + upstream.pathname).toBe(`${azure.url}/common/oauth2/v2.0/authorize`);
    expect(upstream.searchParams.get("scope")).toBe("openid profile email");
    expect(user.username).toBe(claims.preferred_username);
    expect(user.human.profile).toMatchObject({ givenName: "Ada", familyName: "Lovelace", displayName: "Ada Lovelace" });
    expect(user.human.email).toEqual({ address: claims.email, isVerified: true });
    // Any tenant: another one's user too.
    expect((await signedIn(idp.common, person(TENANT_B))).user.username).toMatch(/^ms/);
  });

  it("common: refuses a token whose iss is not its own tenant's, or that names no tenant", async () => {
    refused((await via(idp.common, person(TENANT_A, { iss: `${azure.url}/${TENANT_B}/v2.0` }))).page);
    // The discovery document's template is no issuer.
    refused((await via(idp.common, person(TENANT_A, { iss: `${azure.url}/{tenantid}/v2.0` }))).page);
    refused((await via(idp.common, person("not-a-guid", { iss: `${azure.url}/not-a-guid/v2.0` }))).page);
    const { tid: _, ...noTenant } = person(TENANT_A);
    refused((await via(idp.common, { ...noTenant, iss: `${azure.url}/${TENANT_A}/v2.0` })).page);
  });

  it("a tenant's own endpoint takes only its issuer, named by ID or by domain", async () => {
    const claims = person(TENANT_A);
    const { user, upstream } = await signedIn(idp.tenant, claims);
    expect(upstream.pathname).toBe(`/${TENANT_A}/oauth2/v2.0/authorize`);
    expect(user.username).toBe(claims.preferred_username);
    refused((await via(idp.tenant, person(TENANT_B))).page);
    refused((await via(idp.tenant, person(TENANT_A, { iss: `${azure.url}/${TENANT_B}/v2.0` }))).page);

    const byDomain = await signedIn(idp.byDomain, person(TENANT_A));
    expect(byDomain.upstream.pathname).toBe("/contoso.onmicrosoft.com/oauth2/v2.0/authorize");
    refused((await via(idp.byDomain, person(TENANT_B))).page);
  });

  it("without isEmailVerified the address is kept unverified", async () => {
    const claims = person(TENANT_B, { email_verified: true });
    const { user } = await signedIn(idp.unverified, claims);
    expect(user.human.email).toEqual({ address: claims.email });
  });

  it("consumers takes only personal accounts, organizations only work and school ones", async () => {
    expect((await signedIn(idp.consumers, person(CONSUMERS))).user.username).toMatch(/^ms/);
    refused((await via(idp.consumers, person(TENANT_A))).page);
    expect((await signedIn(idp.organizations, person(TENANT_A))).user.username).toMatch(/^ms/);
    refused((await via(idp.organizations, person(CONSUMERS))).page);
  });
});
