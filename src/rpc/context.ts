import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Principal } from "../domain/authz/principal.js";
import type { Actor } from "../domain/details.js";
import type { InstanceRef } from "../domain/instance/queries.js";

/** The instance the request acts in, set by the tenant interceptor. */
export const tenantKey = createContextKey<InstanceRef | undefined>(undefined, { description: "tenant" });
/** The authenticated caller, set by the authentication interceptor. */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "principal" });

function required<T>(value: T | undefined, what: string): T {
  // Interceptors set these for every method with rules; missing means a wiring bug.
  if (value === undefined) throw new ConnectError(`no ${what} in request context`, Code.Internal);
  return value;
}

export function tenantOf(ctx: HandlerContext): InstanceRef {
  return required(ctx.values.get(tenantKey), "tenant");
}

export function actorOf(ctx: HandlerContext): Actor {
  return {
    instanceId: tenantOf(ctx).id,
    userId: required(ctx.values.get(principalKey), "principal").userId,
  };
}
