import * as client from "openid-client";
import { expect } from "vitest";
import { Browser } from "../oidc/browser.js";
import { RP, type App } from "../oidc/external-helpers.js";

/**
 * An authorization request of the relying party in a fresh browser, on a server whose login
 * UI is one of its own (PLATFORM_OIDC_LOGIN_UI_URL): where the provider sent the browser, and
 * the request's id there, which the UI's server reads and finalizes.
 */
export async function authorizeAtLoginUi(baseUrl: string, rp: App, params: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rp.config, {
    redirect_uri: RP,
    scope: "openid",
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...params,
  });
  const browser = new Browser(baseUrl);
  const page = await browser.open(url);
  expect(page.left, `sent to ${page.url}`).toBe(true);
  const sentTo = new URL(page.url);
  return { browser, verifier, state, sentTo, id: sentTo.searchParams.get("authRequest") ?? "" };
}
