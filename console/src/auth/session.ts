import { UserManager, WebStorageStateStore, type User } from "oidc-client-ts";
import type { ConsoleConfig } from "../config";

/**
 * The signed-in person, through the service's own OpenID Connect (authorization code with
 * PKCE, oidc-client-ts). Tokens stay in sessionStorage (this tab, gone with it), never in
 * localStorage; the refresh token renews the access token before it expires; signing out
 * ends the session at the service (end session), not only here.
 */
const API_SCOPE = "urn:platform:iam:org:project:id:platform:aud";
export const CALLBACK_PATH = `${import.meta.env.BASE_URL}callback`;

export class Session {
  readonly manager: UserManager;

  constructor(config: ConsoleConfig) {
    const store = new WebStorageStateStore({ store: window.sessionStorage });
    this.manager = new UserManager({
      authority: config.issuer,
      client_id: config.clientId,
      redirect_uri: `${config.issuer}${CALLBACK_PATH}`,
      post_logout_redirect_uri: `${config.issuer}${import.meta.env.BASE_URL}`,
      response_type: "code",
      scope: `openid profile email offline_access ${API_SCOPE}`,
      userStore: store,
      stateStore: store,
      // The ID token carries no profile beside an access token (the spec's rule): the name comes from userinfo.
      loadUserInfo: true,
      automaticSilentRenew: true,
      // Renewed a minute before it expires.
      accessTokenExpiringNotificationTimeInSeconds: 60,
    });
  }

  /** The signed-in person, when the tab holds a token that is not expired. */
  async current(): Promise<User | undefined> {
    const user = await this.manager.getUser();
    return user && !user.expired ? user : undefined;
  }

  /** To the service's login pages; back to `returnTo` afterwards. */
  signIn(returnTo: string): Promise<void> {
    return this.manager.signinRedirect({ state: { returnTo } });
  }

  /** The login pages' answer: the tokens, and where the person was going. */
  async completeSignIn(): Promise<string> {
    const user = await this.manager.signinRedirectCallback();
    const returnTo = (user.state as { returnTo?: unknown } | undefined)?.returnTo;
    // Only a page of the console: the state came through the browser.
    return typeof returnTo === "string" && returnTo.startsWith(import.meta.env.BASE_URL) ? returnTo : import.meta.env.BASE_URL;
  }

  async signOut(): Promise<void> {
    const user = await this.manager.getUser();
    await this.manager.removeUser();
    await this.manager.signoutRedirect({ ...(user?.id_token && { id_token_hint: user.id_token }) });
  }

  async accessToken(): Promise<string | undefined> {
    return (await this.current())?.access_token;
  }
}
