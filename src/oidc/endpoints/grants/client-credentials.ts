import { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Db } from "../../../store/db.js";
import { issueAccessToken } from "../../helpers/issue.js";
import type { OidcLookups } from "../../helpers/lookups.js";
import { audienceAndScope, isKnownScope, splitScope } from "../../helpers/scopes.js";

/**
 * client_credentials for machine users: client_id is the username, client_secret the user's
 * secret, by Basic header or in the body (the client's registered method is
 * client_secret_basic, which the provider pairs with client_secret_post). The token acts for
 * the machine user; no refresh token and no ID token are issued.
 */
export function clientCredentialsGrant(db: () => Db, instanceId: string, lookups?: OidcLookups) {
  return async (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc.client!;
    const userId = client["platform_user_id"] as string | undefined;
    if (!userId) throw new errors.UnauthorizedClient("client_credentials is for machine users");
    const asked = splitScope(ctx.oidc.params!.scope as string | undefined).filter((s) => isKnownScope(s) && s !== "offline_access");
    const { aud, scopes } = await audienceAndScope(db(), instanceId, { clientId: client.clientId }, asked, lookups);
    const format = client["platform_access_token_type"] === "jwt" ? "jwt" : "opaque";
    const issued = await issueAccessToken(ctx, { accountId: userId, scopes, aud, format, gty: "client_credentials" });
    ctx.body = { access_token: issued.value, token_type: "Bearer", expires_in: issued.expiresIn, scope: scopes.join(" ") };
  };
}
