import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RequestContext } from "../../../gen/platform/object/v3alpha/object_pb.js";
import { invalidArgument, notFound } from "../../domain/errors.js";
import type { TenantResolver } from "../../server/tenant-resolver.js";
import { clientAddressKey, tenantKey } from "../context.js";
import { requireRules } from "../method-rules.js";

/**
 * Host names by the scheme and authority they were read from; emptied when full. A caller
 * picks its Host header freely and is not known yet here: only origins as long as a DNS name
 * can be (253) with scheme and port are kept, so that the cache holds a few hundred KiB at most.
 */
const hostNames = new Map<string, string>();
const HOST_NAMES_KEPT = 1024;
const ORIGIN_KEPT_MAX_LENGTH = 270;

/** The URL's host name, parsed once per scheme and authority. */
function hostOf(url: string): string {
  const pathAt = url.indexOf("/", url.indexOf("//") + 2);
  const origin = pathAt < 0 ? url : url.slice(0, pathAt);
  let host = hostNames.get(origin);
  if (host === undefined) {
    try {
      host = new URL(origin).hostname.toLowerCase();
    } catch {
      throw invalidArgument("the Host header is not a valid host name");
    }
    if (origin.length > ORIGIN_KEPT_MAX_LENGTH) return host;
    if (hostNames.size >= HOST_NAMES_KEPT) hostNames.clear();
    hostNames.set(origin, host);
  }
  return host;
}

/**
 * The Host header's host name selects the instance (server/tenant-resolver.ts). A blocked
 * instance answers ResourceExhausted to everything but calls in the system context
 * (`ctx.system`), so that system members can still lift the block.
 */
export function tenantInterceptor(tenants: TenantResolver): Interceptor {
  return (next) => async (req) => {
    if (requireRules(req.method).tenantless) return next(req);
    const host = hostOf(req.url);
    const instance = await tenants.resolve(host, req.signal, req.contextValues.get(clientAddressKey));
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
