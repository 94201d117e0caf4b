import type { Interceptor } from "@connectrpc/connect";
import { TtlCache } from "../../cache/ttl-cache.js";
import { notFound } from "../../domain/errors.js";
import { instanceByDomain, type InstanceRef } from "../../domain/instance/queries.js";
import type { Db } from "../../store/eventstore.js";
import { tenantKey } from "../context.js";
import { methodRules } from "../method-rules.js";

/** The Host header's host name selects the instance. */
export function tenantInterceptor(db: Db): Interceptor {
  const byDomain = new TtlCache<string, InstanceRef>(30_000);
  return (next) => async (req) => {
    if (!methodRules(req.method)) return next(req);
    const host = new URL(req.url).hostname.toLowerCase();
    let instance = byDomain.get(host);
    if (!instance) {
      instance = await instanceByDomain(db, host);
      if (!instance) throw notFound(`no instance serves the host "${host}"`);
      byDomain.set(host, instance);
    }
    req.contextValues.set(tenantKey, instance);
    return next(req);
  };
}
