import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RequestContext } from "../../../gen/platform/object/v3alpha/object_pb.js";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
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
 * applies only when no instance has the name itself. A blocked instance answers
 * ResourceExhausted to everything but calls in the system context (`ctx.system`), so that
 * system members can still lift the block. Cached per host until an access change
 * (cache/access-epoch.ts) on any process.
 */
export function tenantInterceptor(store: Pick<Store, "forRequest">, aliases: ReadonlyMap<string, string>, access: AccessEpoch): Interceptor {
  const byDomain = new AccessCache<string, InstanceRef>(access, 30_000);
  const lookUp = async (host: string, signal: AbortSignal) => {
    const { db } = store.forRequest(signal);
    const alias = aliases.get(host);
    return (await instanceByDomain(db, host)) ?? (alias ? await instanceByDomain(db, alias) : undefined);
  };
  return (next) => async (req) => {
    if (requireRules(req.method).tenantless) return next(req);
    const host = hostOf(req.url);
    const instance = await byDomain.get(host, () => lookUp(host, req.signal));
    if (!instance) throw notFound(`no instance serves the host "${host}"`);
    if (instance.blocked && !inSystemContext(req)) throw new ConnectError("instance is blocked", Code.ResourceExhausted);
    req.contextValues.set(tenantKey, instance);
    return next(req);
  };
}

function inSystemContext(req: { method: Parameters<typeof requireRules>[0]; stream: boolean; message?: unknown }): boolean {
  const field = requireRules(req.method).ctxField;
  if (req.stream || !field) return false;
  const ctx = (req.message as Record<string, RequestContext | undefined>)[field.localName];
  return ctx?.type.case === "system";
}
