import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache, type MissCaching } from "../../cache/access-cache.js";
import type { UnknownLookups } from "../../cache/unknown-lookups.js";
import { hashToken } from "../../crypto/tokens.js";
import type { Principal } from "../../domain/authz/principal.js";
import { principalByTokenHash } from "../../domain/pat/queries.js";
import type { AccessTokenPrincipals } from "../../oidc/helpers/principals.js";
import type { Store } from "../../store/database.js";
import { clientAddressKey, principalKey, tenantKey } from "../context.js";
import { PUBLIC, requireRules } from "../method-rules.js";

/** RFC 7235: the scheme is case-insensitive. */
const BEARER = /^bearer ([A-Za-z0-9._~+/=-]{16,4096})$/i;

/**
 * Resolves the bearer token to a principal: a personal access token, else an OpenID Connect
 * access token of the Host's instance (oidc/helpers/principals.ts). Tokens are instance-scoped: they
 * work on their own instance's hosts only. Principals are cached briefly; an expired token
 * is never served from the cache, nor anything a change of access made stale (AccessEpoch).
 * Unknown tokens are cached briefly too, and bounded per client address
 * (cache/unknown-lookups.ts): any client may send any token.
 */
export function authenticationInterceptor(
  store: Pick<Store, "forRequest">,
  access: AccessEpoch,
  accessTokens: AccessTokenPrincipals,
  unknown: { lookups: UnknownLookups; misses: MissCaching },
  cacheTtlMs = 10_000,
): Interceptor {
  const principals = new AccessCache<string, { principal: Principal; expires: number }>(access, cacheTtlMs, unknown.misses);
  return (next) => async (req) => {
    if (requireRules(req.method).permission === PUBLIC) return next(req);
    const header = req.header.get("authorization");
    if (!header) throw challenge("missing bearer token: send Authorization: Bearer <token>", false);
    const token = BEARER.exec(header)?.[1];
    if (!token) throw challenge("malformed Authorization header: expected Bearer <token>", true);

    const hash = hashToken(token);
    const tenant = req.contextValues.get(tenantKey);
    const lookUp = async () => {
      const { db } = store.forRequest(req.signal);
      return (await principalByTokenHash(db, hash)) ?? (tenant ? await accessTokens.principal(db, tenant.id, token) : undefined);
    };
    // Per instance: an OpenID Connect access token is looked up in the Host's instance only.
    const key = `${tenant?.id ?? ""} ${hash}`;
    const entry = await principals.get(
      key,
      () => unknown.lookups.load(req.contextValues.get(clientAddressKey), lookUp),
      (found) => found.expires > Date.now(),
    );
    if (!entry) throw challenge("the token is unknown or expired", true);
    // A token works on its own instance's hosts; system members reach other instances
    // through the request's ctx (request-context.ts), never through another instance's Host.
    if (tenant && entry.principal.instanceId !== tenant.id) throw challenge("the token is not valid for this instance", true);
    req.contextValues.set(principalKey, entry.principal);
    return next(req);
  };
}

/**
 * RFC 6750 section 3: every 401 names the scheme it wants, and says invalid_token when a
 * token was sent. On HTTP/1.1 (REST, Connect) this is a response header; on gRPC a trailer.
 */
function challenge(message: string, tokenSent: boolean): ConnectError {
  const error = new ConnectError(message, Code.Unauthenticated);
  error.metadata.set("www-authenticate", tokenSent ? `Bearer error="invalid_token", error_description="${message}"` : "Bearer");
  return error;
}
