import type { Interceptor } from "@connectrpc/connect";
import { TtlCache } from "../../cache/ttl-cache.js";
import { hashToken } from "../../crypto/tokens.js";
import { isSystemMember, type Principal } from "../../domain/authz/principal.js";
import { unauthenticated } from "../../domain/errors.js";
import { principalByTokenHash } from "../../domain/pat/queries.js";
import type { Db } from "../../store/eventstore.js";
import { principalKey, tenantKey } from "../context.js";
import { PUBLIC, requireRules } from "../method-rules.js";

/** RFC 7235: the scheme is case-insensitive. */
const BEARER = /^bearer ([A-Za-z0-9._~+/=-]{16,4096})$/i;

/**
 * Resolves the bearer token to a principal. Tokens are instance-scoped: only members of
 * the system context may use theirs on another instance. Principals are cached briefly;
 * an expired token is never served from the cache.
 */
export function authenticationInterceptor(db: Db, cacheTtlMs = 10_000): Interceptor {
  const principals = new TtlCache<string, { principal: Principal; expires: number }>(cacheTtlMs);
  return (next) => async (req) => {
    if (requireRules(req.method).permission === PUBLIC) return next(req);
    const header = req.header.get("authorization");
    if (!header) throw unauthenticated("missing bearer token: send Authorization: Bearer <token>");
    const token = BEARER.exec(header)?.[1];
    if (!token) throw unauthenticated("malformed Authorization header: expected Bearer <token>");

    const key = hashToken(token);
    let entry = principals.get(key);
    if (!entry || entry.expires <= Date.now()) {
      const found = await principalByTokenHash(db, key);
      if (!found) throw unauthenticated("the token is unknown or expired");
      entry = found;
      principals.set(key, entry);
    }
    const tenant = req.contextValues.get(tenantKey);
    if (tenant && entry.principal.instanceId !== tenant.id && !isSystemMember(entry.principal)) {
      throw unauthenticated("the token is not valid for this instance");
    }
    req.contextValues.set(principalKey, entry.principal);
    return next(req);
  };
}
