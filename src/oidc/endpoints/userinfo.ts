import { FunctionError } from "../../engines/actions/functions.js";
import type { NodeRequest, NodeResponse } from "../../http/respond.js";
import { activeAccountWithGrants } from "../../domain/user/accounts.js";
import { claimsOf } from "../models/accounts.js";
import { roleClaimsOf } from "../helpers/roles.js";
import { lookUpAccessToken, type EndpointContext } from "./context.js";
import { OAuthError, sendJson } from "./oauth-response.js";

const BEARER = /^bearer ([A-Za-z0-9._~+/=-]{1,8192})$/i;

/**
 * OpenID Connect Core 1.0 section 5.3: the user's claims by the token's scopes, for a valid
 * access token (either format) granted `openid` whose user and organization are active.
 * RFC 6750 section 3: every refusal names the Bearer scheme.
 */
export async function userinfo(req: NodeRequest, res: NodeResponse, c: EndpointContext): Promise<void> {
  if (req.method !== "GET" && req.method !== "POST") throw new OAuthError(405, "invalid_request", "use GET or POST");
  const header = req.headers.authorization;
  if (!header) throw challenge(401, "invalid_token", "no access token provided", false);
  const value = BEARER.exec(header)?.[1];
  if (!value) throw challenge(401, "invalid_token", "the Authorization header must be Bearer <access token>");
  const record = await lookUpAccessToken(c, value);
  if (!record) throw challenge(401, "invalid_token", "the access token is invalid, expired or revoked");
  const scopes = new Set(record.scope.split(" ").filter(Boolean));
  if (!scopes.has("openid")) throw challenge(403, "insufficient_scope", "the access token was not granted the openid scope");
  const found = await activeAccountWithGrants(c.db, c.instanceId, record.accountId, record.aud);
  if (!found) throw challenge(401, "invalid_token", "the token's user or organization is no longer active");
  const claims = { ...claimsOf(found.account, scopes), ...roleClaimsOf(found.grants, [...scopes]) };
  let answered: Record<string, unknown>;
  try {
    answered = await c.functions.run(c.db, c.instanceId, "preuserinfo", found.account, claims);
  } catch (error) {
    // A function target that interrupts on error refused (or failed): its message, never a 500.
    if (error instanceof FunctionError) throw new OAuthError(error.status, "access_denied", error.message);
    throw error;
  }
  sendJson(res, 200, answered);
}

function challenge(status: number, error: string, description: string, tokenSent = true): OAuthError {
  const value = tokenSent ? `Bearer error="${error}", error_description="${description}"` : "Bearer";
  return new OAuthError(status, error, description, { "www-authenticate": value });
}
