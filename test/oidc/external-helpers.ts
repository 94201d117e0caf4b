import * as client from "openid-client";
import { expect } from "vitest";
import { AUTH_CODE, BASIC, BEARER, WEB, appClient, oidc, projectClient } from "../apps/helpers.js";
import type { TestServer } from "../support/server.js";
import { parseForms, type Page } from "./browser.js";

/** What the external login tests share: the downstream's relying party and its requests. */

export const RP = "https://rp.example/cb";

export interface App {
  clientId: string;
  clientSecret: string;
  config: client.Configuration;
}

export async function createApp(server: TestServer, name: string, config: Record<string, unknown>) {
  const project = await projectClient(server.baseUrl, server.adminToken).ok("CreateProject", { project: { name: `${name}-project` } });
  const made = await appClient(server.baseUrl, server.adminToken).ok("CreateApp", {
    projectId: project.details.id,
    app: { name, oidc: oidc(config as never) },
  });
  return { clientId: made.clientId as string, clientSecret: made.clientSecret as string };
}

export async function createRp(server: TestServer): Promise<App> {
  const made = await createApp(server, "rp", { redirectUris: [RP], appType: WEB, authMethodType: BASIC, grantTypes: [AUTH_CODE], accessTokenType: BEARER });
  const discovered = await client.discovery(new URL(server.baseUrl), made.clientId, made.clientSecret, client.ClientSecretBasic(made.clientSecret), {
    execute: [client.allowInsecureRequests],
  });
  return { ...made, config: discovered };
}

/** An authorization request of the relying party, with its PKCE verifier and state. */
export async function authorize(server: TestServer, app: App) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = new URL("/oauth/v2/authorize", server.baseUrl);
  const query = {
    client_id: app.clientId,
    redirect_uri: RP,
    response_type: "code",
    scope: "openid profile email",
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  };
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return { url: url.href, verifier, state };
}

/** The button of a provider on the login-name page. */
export function providerForm(page: Page, idpId: string) {
  return parseForms(page.html).find((f) => f.fields.idpId === idpId);
}

/** The tokens of a login that ended at the relying party's redirect URI. */
export async function tokensOf(app: App, request: { verifier: string; state: string }, page: Page) {
  expect(page.left, page.html).toBe(true);
  return client.authorizationCodeGrant(app.config, new URL(page.url), {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    idTokenExpected: true,
  });
}

/** A page of Playwright's, as far as watching its responses goes. */
interface WatchedPage {
  on(
    event: "response",
    listener: (r: { url(): string; status(): number; request(): { method(): string; allHeaders(): Promise<Record<string, string>> } }) => void,
  ): unknown;
}

/**
 * The POSTs a Chromium page makes to `url` from now on: where each came from (its Origin),
 * whether it carried an external login's binding cookie, and what it was answered.
 */
export function postsTo(page: WatchedPage, url: string): Promise<{ from: string; bound: boolean; status: number }>[] {
  const posts: Promise<{ from: string; bound: boolean; status: number }>[] = [];
  page.on("response", (r) => {
    if (r.request().method() !== "POST" || r.url() !== url) return;
    posts.push(
      r
        .request()
        .allHeaders()
        .then((h) => ({ from: h.origin ?? "", bound: /platform_idp_/.test(h.cookie ?? ""), status: r.status() })),
    );
  });
  return posts;
}
