import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { CLIENT_AUTH_METHODS } from "../provider/capabilities.js";
import { OIDC_ROUTES } from "../provider/routes.js";
import { authenticateClient, type ClientAuthMethod } from "./client-auth.js";
import { clientAuthContext, destroyAccessToken, destroyRefreshToken, lookUpAccessToken, lookUpRefreshToken, type EndpointContext } from "./context.js";
import { OAuthError, readForm, sendJson } from "./oauth-response.js";

const ALLOWED = new Set<ClientAuthMethod>(CLIENT_AUTH_METHODS);

/**
 * RFC 7009 with the spec's scope: an access token revokes itself and nothing else; a refresh
 * token itself and the access tokens issued from it (context.ts; the provider's own endpoint
 * would end the whole grant, codes, consent and the client's other authorizations in the
 * browser session included). Only the client the token was issued to, or the machine user
 * it acts for, may revoke it; an unknown or expired token is answered 200, as the RFC asks.
 */
export async function revoke(req: NodeRequest, res: NodeResponse, c: EndpointContext): Promise<void> {
  const form = await readForm(req, c.maxBodyBytes);
  const { party } = await authenticateClient(req.headers.authorization, form, ALLOWED, clientAuthContext(c, OIDC_ROUTES.revocation));
  if (!form.token) throw new OAuthError(400, "invalid_request", "missing required parameter 'token'");
  const refresh = form.token_type_hint === "access_token" ? undefined : await lookUpRefreshToken(c, form.token);
  if (refresh) {
    if (refresh.clientId !== party.clientId) throw new OAuthError(400, "unauthorized_client", "the token was issued to another client");
    await destroyRefreshToken(c, refresh);
    sendJson(res, 200, {});
    return;
  }
  const record = await lookUpAccessToken(c, form.token);
  if (record) {
    const own = record.clientId === party.clientId || (party.kind === "machine" && record.accountId === party.userId);
    if (!own) throw new OAuthError(400, "unauthorized_client", "the token was issued to another client");
    await destroyAccessToken(c, record);
  }
  sendJson(res, 200, {});
}
