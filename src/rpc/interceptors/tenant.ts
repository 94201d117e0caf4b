import type { Interceptor } from "@connectrpc/connect";
import { TtlCache } from "../../cache/ttl-cache.js";
import { invalidArgument, notFound } from "../../domain/errors.js";
import { instanceByDomain, type InstanceRef } from "../../domain/instance/queries.js";
import type { Store } from "../../store/database.js";
import { tenantKey } from "../context.js";
import { requireRules } from "../method-rules.js";

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    throw invalidArgument("the Host header is not a valid host name");
  }
}

/**
 * The Host header's host name selects the instance. An alias (127.0.0.1 for localhost)
 * applies only when no instance has the name itself.
 */
export function tenantInterceptor(store: Pick<Store, "forRequest">, aliases: ReadonlyMap<string, string>): Interceptor {
  const byDomain = new TtlCache<string, InstanceRef>(30_000);
  const lookUp = async (host: string, signal: AbortSignal) => {
    const { db } = store.forRequest(signal);
    const alias = aliases.get(host);
    return (await instanceByDomain(db, host)) ?? (alias ? await instanceByDomain(db, alias) : undefined);
  };
  return (next) => async (req) => {
    if (requireRules(req.method).tenantless) return next(req);
    const host = hostOf(req.url);
    let instance = byDomain.get(host);
    if (!instance) {
      instance = await lookUp(host, req.signal);
      if (!instance) throw notFound(`no instance serves the host "${host}"`);
      byDomain.set(host, instance);
    }
    req.contextValues.set(tenantKey, instance);
    return next(req);
  };
}
