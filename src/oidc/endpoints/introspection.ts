import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { activeAccountWithGrants } from "../../domain/user/accounts.js";
import { claimsOf } from "../models/accounts.js";
import { roleClaimsOf } from "../helpers/roles.js";
import { OIDC_ROUTES } from "../provider/routes.js";
import { authenticateClient, type ClientAuthMethod } from "./client-auth.js";
import { clientAuthContext, lookUpAccessToken, type EndpointContext } from "./context.js";
import { OAuthError, readForm, sendJson } from "./oauth-response.js";

const ALLOWED = new Set<ClientAuthMethod>(["client_secret_basic", "private_key_jwt"]);

/**
 * RFC 7662 for applications (resource servers): an access token of either format is active
 * only when it is valid and not revoked, its user and organization are active, and the
 * asking application or its project is in its audience. Active answers carry the user's
 * claims by the token's scopes and `username` as the login name.
 */
export async function introspect(req: NodeRequest, res: NodeResponse, c: EndpointContext): Promise<void> {
  const form = await readForm(req, c.maxBodyBytes);
  const { party } = await authenticateClient(req.headers.authorization, form, ALLOWED, clientAuthContext(c, OIDC_ROUTES.introspection));
  if (party.kind !== "app") throw new OAuthError(401, "invalid_client", "only applications may introspect tokens");
  if (!form.token) throw new OAuthError(400, "invalid_request", "missing required parameter 'token'");
  const record = await lookUpAccessToken(c, form.token);
  const found = record && (await activeAccountWithGrants(c.db, c.instanceId, record.accountId, record.aud));
  if (!record || !found || !(record.aud.includes(party.clientId) || record.aud.includes(party.projectId))) {
    sendJson(res, 200, { active: false });
    return;
  }
  const scopes = new Set(record.scope.split(" ").filter(Boolean));
  sendJson(res, 200, {
    ...claimsOf(found.account, scopes),
    ...roleClaimsOf(found.grants, [...scopes]),
    active: true,
    aud: record.aud,
    client_id: record.clientId,
    exp: record.exp,
    iat: record.iat,
    nbf: record.iat,
    iss: c.issuer,
    jti: record.jti,
    scope: record.scope,
    token_type: "Bearer",
    username: found.account.loginName,
    ...(record.act && { act: record.act }),
  });
}
