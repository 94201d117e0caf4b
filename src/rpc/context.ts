import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Principal } from "../domain/authz/principal.js";
import { SYSTEM_CONTEXT, type ContextRef } from "../domain/context.js";
import type { Actor } from "../domain/details.js";
import type { InstanceRef } from "../domain/instance/queries.js";
import { originOf, type Editor } from "../store/editor.js";

/** The caller's address (the peer of its connection), set where the request comes in (server/app.ts, the REST gateway). */
export const clientAddressKey = createContextKey<string | undefined>(undefined, { description: "client address" });
/** The instance the request acts in, set by the tenant interceptor. */
export const tenantKey = createContextKey<InstanceRef | undefined>(undefined, { description: "tenant" });
/**
 * The project grant a `ctx.projectGrantId` selected (memberships only), with the organization
 * it was given to, set by the request-context interceptor beside that organization (orgKey).
 */
export const projectGrantKey = createContextKey<{ id: string; orgId: string } | undefined>(undefined, { description: "project grant" });
/**
 * The project grants a per-result search may show beside visibleOrgsKey's organizations:
 * those where the caller is PROJECT_GRANT_OWNER. Set by the authorization interceptor.
 */
export const visibleProjectGrantsKey = createContextKey<ReadonlySet<string> | undefined>(undefined, { description: "visible project grants" });
/** The organization an org `ctx` selected, set by the request-context interceptor. */
export const orgKey = createContextKey<{ id: string } | undefined>(undefined, { description: "organization" });
/**
 * The organizations a per-result search may show (see options.proto `per_result`), set by
 * the authorization interceptor; undefined: every organization of the instance.
 */
export const visibleOrgsKey = createContextKey<ReadonlySet<string> | undefined>(undefined, { description: "visible organizations" });
/** Set when `ctx.system` selected the system context above all instances. */
export const systemKey = createContextKey<boolean>(false, { description: "system context" });
/** Set when the caller acts on itself without the method's permission (options.proto `self`). */
export const selfOnlyKey = createContextKey<boolean>(false, { description: "acting on itself only" });
/**
 * The context a request names a reusable resource in when it has no `ctx`: the resource's
 * owner (set by the authorization interceptor).
 */
export const askedKey = createContextKey<ContextRef | undefined>(undefined, { description: "context asked for" });
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

export function principalOf(ctx: HandlerContext): Principal {
  return required(ctx.values.get(principalKey), "principal");
}

/** Who writes: the caller, with where its request came from (recorded with the events it causes). */
export function editorOf(ctx: HandlerContext): Editor {
  const principal = required(ctx.values.get(principalKey), "principal");
  return {
    userId: principal.userId,
    origin: originOf({ client: principal.client, ip: ctx.values.get(clientAddressKey), userAgent: ctx.requestHeader.get("user-agent") }),
  };
}

export function actorOf(ctx: HandlerContext): Actor {
  return { instanceId: tenantOf(ctx).id, ...editorOf(ctx) };
}

/** The organization an `in_org` request acts in: its ctx's, or the default the authorization fixed. */
export function actingOrg(ctx: HandlerContext): string {
  return required(ctx.values.get(orgKey), "organization").id;
}

/** What a per-result search may show: the ctx's organization, or what the caller may read. */
export function visibleOrgs(ctx: HandlerContext): ReadonlySet<string> | undefined {
  const selected = ctx.values.get(orgKey);
  return selected ? new Set([selected.id]) : ctx.values.get(visibleOrgsKey);
}

/** The context a request acts in: its ctx's, a named reusable resource's owner, else the Host's instance. */
export function askedContext(values: HandlerContext["values"]): ContextRef {
  const owner = values.get(askedKey);
  if (owner) return owner;
  if (values.get(systemKey)) return SYSTEM_CONTEXT;
  const instanceId = required(values.get(tenantKey), "tenant").id;
  const org = values.get(orgKey);
  return org ? { type: "org", instanceId, orgId: org.id } : { type: "instance", instanceId };
}
