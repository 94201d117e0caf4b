import type { Interceptor } from "@connectrpc/connect";
import { belongsTo, hasPermission, holdsAnywhere, organizationsWith, type Principal } from "../../domain/authz/principal.js";
import { RESOURCE_OWNERS } from "../../domain/authz/resource-owners.js";
import { notFound, permissionDenied } from "../../domain/errors.js";
import { defaultOrgId } from "../../domain/instance/queries.js";
import type { Store } from "../../store/database.js";
import { askedContext, orgKey, principalKey, selfOnlyKey, systemKey, tenantKey, visibleOrgsKey } from "../context.js";
import { AUTHENTICATED, PUBLIC, requireRules } from "../method-rules.js";
import { authorizeReusable } from "./reusable-resources.js";

/**
 * Checks the permission the method declares against the caller's memberships, in the
 * context the request acts in: the system or organization its ctx selected, else the
 * organization owning the resource it names, else (for creations in an organization) the
 * default organization, else its instance. Permissions of enclosing contexts count.
 */
export function authorizationInterceptor(store: Pick<Store, "forRequest">): Interceptor {
  return (next) => async (req) => {
    const rules = requireRules(req.method);
    if (rules.permission === PUBLIC) return next(req);
    const principal = req.contextValues.get(principalKey);
    const tenant = req.contextValues.get(tenantKey);
    if (rules.permission === AUTHENTICATED) {
      if (rules.contextMember && !(principal && belongsTo(principal, askedContext(req.contextValues)))) {
        throw permissionDenied("you belong neither to this context nor to one enclosing it");
      }
      return next(req);
    }
    const denied = () => permissionDenied(`missing permission ${rules.permission}`);
    if (!principal || !tenant) throw denied();
    if (rules.resource?.reusable) {
      await authorizeReusable(store.forRequest(req.signal).db, req, rules.permission, rules.resource, principal, tenant.id);
      return next(req);
    }
    if (req.contextValues.get(systemKey)) {
      if (!hasPermission(principal, rules.permission, { system: true })) throw denied();
      return next(req);
    }
    const selected = req.contextValues.get(orgKey)?.id;
    let instanceId = tenant.id;
    let orgId = selected;

    if (rules.resource) {
      const key = (req.message as unknown as Record<string, string>)[rules.resource.field.localName]!;
      const owner = await RESOURCE_OWNERS[rules.resource.kind]!(store.forRequest(req.signal).db, tenant.id, key);
      if (owner === undefined && selected === undefined && hasPermission(principal, rules.permission, { instanceId })) {
        // Allowed on whatever it is: validation and the handler give the precise answer.
        return next(req);
      }
      const visible =
        owner !== undefined &&
        (selected === undefined || owner.orgId === selected) &&
        // Another instance exists only for who may act in it: system members.
        (owner.instanceId === tenant.id || hasPermission(principal, rules.permission, owner));
      if (!visible) {
        // Only who may see such resources somewhere learns that this one does not exist.
        if (!holdsAnywhere(principal, rules.permission, tenant.id)) throw denied();
        throw notFound(`${rules.resource.kind} ${key} not found`);
      }
      instanceId = owner.instanceId;
      orgId = owner.orgId;
    }

    if (rules.inOrg && orgId === undefined) {
      // Fixed here for the handler too (actingOrg), so that both see the same default.
      orgId = await defaultOrgId(store.forRequest(req.signal).db, tenant.id);
      req.contextValues.set(orgKey, { id: orgId });
    }

    if (rules.perResult && orgId === undefined) {
      const visible = organizationsWith(principal, rules.permission, tenant.id);
      if (visible !== "all" && visible.size === 0) throw denied();
      if (visible !== "all") req.contextValues.set(visibleOrgsKey, visible);
      return next(req);
    }
    if (!hasPermission(principal, rules.permission, { instanceId, ...(orgId !== undefined && { orgId }) })) {
      if (!(rules.self && isSelf(principal, tenant.id, req.message, rules.resource!.field.localName))) throw denied();
      req.contextValues.set(selfOnlyKey, true);
    }
    return next(req);
  };
}

function isSelf(principal: Principal, instanceId: string, message: unknown, field: string): boolean {
  return principal.instanceId === instanceId && (message as Record<string, unknown>)[field] === principal.userId;
}
