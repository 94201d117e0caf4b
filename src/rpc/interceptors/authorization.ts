import { isFieldSet, type DescField, type Message } from "@bufbuild/protobuf";
import type { Interceptor, StreamRequest, UnaryRequest } from "@connectrpc/connect";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
import { belongsTo, hasPermission, holdsAnywhere, organizationsWith, projectGrantsWith, type Principal } from "../../domain/authz/principal.js";
import { FIXED_OWNER_KINDS, RESOURCE_GRANTEES, RESOURCE_OWNERS, RESOURCE_TOKENS, type ResourceOwner } from "../../domain/authz/resource-owners.js";
import type { Grantee } from "../../domain/project-grant/queries.js";
import { notFound, permissionDenied } from "../../domain/errors.js";
import { defaultOrgId } from "../../domain/instance/queries.js";
import type { Store } from "../../store/database.js";
import { askedContext, orgKey, principalKey, projectGrantKey, selfOnlyKey, systemKey, tenantKey, visibleOrgsKey, visibleProjectGrantsKey } from "../context.js";
import { AUTHENTICATED, PUBLIC, requireRules, type MethodRules } from "../method-rules.js";
import { authorizeReusable } from "./reusable-resources.js";

/**
 * Checks the permission the method declares against the caller's memberships, in the
 * context the request acts in: the system or organization its ctx selected, else the
 * organization owning the resource it names, else (for creations in an organization) the
 * default organization, else its instance. Permissions of enclosing contexts count.
 */
export function authorizationInterceptor(store: Pick<Store, "forRequest">, access: AccessEpoch): Interceptor {
  // Owners that never change are kept until the next change of access (deleting an
  // organization or a user advances it) or half a minute: that saves GetUser and every other
  // call naming such a resource one statement. A cached owner of a resource deleted since
  // decides only whether the caller learns "not found" (from the handler's own read) or
  // "permission denied", as it did while the resource existed; misses are never cached.
  const owners = new AccessCache<string, ResourceOwner>(access, 30_000);
  const ownerOf = (req: UnaryRequest | StreamRequest, kind: string, instanceId: string, key: string) => {
    const load = () => RESOURCE_OWNERS[kind]!(store.forRequest(req.signal).db, instanceId, key);
    return FIXED_OWNER_KINDS.has(kind) ? owners.get(`${kind} ${instanceId} ${key}`, load) : load();
  };
  const grantees = new AccessCache<string, Grantee[]>(access, 30_000);
  const granteesOf = (req: UnaryRequest | StreamRequest, kind: string, instanceId: string, key: string) =>
    grantees.get(`${kind} ${instanceId} ${key}`, () => RESOURCE_GRANTEES[kind]!(store.forRequest(req.signal).db, instanceId, key));
  /**
   * For `for_grantees` methods: the organization the project is granted to that the request
   * acts for, when it does not act for the owner: the one its ctx selected, else one where
   * the caller holds the permission (there or in the grant). Undefined: the owner's rules apply.
   */
  const actingGrantee = async (
    req: UnaryRequest | StreamRequest,
    rules: MethodRules,
    principal: Principal,
    found: ResourceOwner,
    key: string,
    selected?: string,
  ) => {
    if (!rules.forGrantees || !rules.resource) return undefined;
    const { permission } = rules;
    const ownerScope = { instanceId: found.instanceId, ...(found.orgId !== undefined && { orgId: found.orgId }) };
    const inOwner = hasPermission(principal, permission, ownerScope);
    if (selected === undefined ? inOwner : selected === found.orgId) return undefined;
    const all = await granteesOf(req, rules.resource.kind, found.instanceId, key);
    // With a ctx, only who may act in the grantee or see the project learns that it is granted
    // there: anyone else gets what a project granted elsewhere gets (NotFound).
    const mayAct = (g: Grantee) => hasPermission(principal, permission, granteeScope(found.instanceId, g));
    return (all ?? []).find((g) => (selected === undefined ? mayAct(g) : g.orgId === selected && (inOwner || mayAct(g))));
  };
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
    let owner: ResourceOwner | undefined;
    let projectGrantId = req.contextValues.get(projectGrantKey)?.id;

    if (rules.resource) {
      const key = (req.message as unknown as Record<string, string>)[rules.resource.field.localName]!;
      const found = await ownerOf(req, rules.resource.kind, tenant.id, key);
      if (found === undefined && selected === undefined && hasPermission(principal, rules.permission, { instanceId })) {
        // Allowed on whatever it is: validation and the handler give the precise answer.
        return next(req);
      }
      const grantee = found && found.instanceId === tenant.id ? await actingGrantee(req, rules, principal, found, key, selected) : undefined;
      const visible =
        found !== undefined &&
        (selected === undefined || found.orgId === selected || grantee !== undefined) &&
        // Another instance exists only for who may act in it: system members.
        (found.instanceId === tenant.id || hasPermission(principal, rules.permission, found));
      if (!visible) {
        // Only who may see such resources somewhere learns that this one does not exist.
        if (!holdsAnywhere(principal, rules.permission, tenant.id)) throw denied();
        throw notFound(`${rules.resource.kind} ${key} not found`);
      }
      if (grantee) {
        // Acting for the granted organization: its permission, there or in the grant, and the
        // handler acts for it (actingOrg).
        if (!hasPermission(principal, rules.permission, granteeScope(tenant.id, grantee))) throw denied();
        req.contextValues.set(orgKey, { id: grantee.orgId });
        return next(req);
      }
      const token = rules.tokenField && (req.message as unknown as Record<string, string>)[rules.tokenField.localName];
      if (token && (await RESOURCE_TOKENS[rules.resource.kind]!(store.forRequest(req.signal).db, found.instanceId, key, token))) return next(req);
      owner = found;
      instanceId = found.instanceId;
      orgId = found.orgId;
      projectGrantId = found.projectGrantId;
    }

    if (rules.inOrg && orgId === undefined) {
      // Fixed here for the handler too (actingOrg), so that both see the same default.
      orgId = await defaultOrgId(store.forRequest(req.signal).db, tenant.id);
      req.contextValues.set(orgKey, { id: orgId });
    }

    if (rules.self && !rules.resource && !hasPermission(principal, rules.permission, { instanceId })) {
      if (principal.instanceId !== tenant.id) throw denied();
      // A search of one's own: the handler limits it to the caller's results.
      actOnSelf(req, rules);
      return next(req);
    }

    if (rules.perResult && orgId === undefined) {
      const visible = organizationsWith(principal, rules.permission, tenant.id);
      const grants = visible === "all" ? new Set<string>() : projectGrantsWith(principal, rules.permission, tenant.id);
      if (visible !== "all" && visible.size === 0 && grants.size === 0) throw denied();
      if (visible !== "all") req.contextValues.set(visibleOrgsKey, visible);
      if (grants.size > 0) req.contextValues.set(visibleProjectGrantsKey, grants);
      return next(req);
    }
    if (!hasPermission(principal, rules.permission, { instanceId, ...(orgId !== undefined && { orgId }), ...(projectGrantId && { projectGrantId }) })) {
      if (!(rules.self && principal.instanceId === tenant.id && owner?.userId === principal.userId)) throw denied();
      actOnSelf(req, rules);
    }
    return next(req);
  };
}

/** Where a granted organization acts on a project: in the organization, and in its grant. */
function granteeScope(instanceId: string, grantee: Grantee) {
  return { instanceId, orgId: grantee.orgId, projectGrantId: grantee.projectGrantId };
}

function isSetAlong(message: Message, path: readonly DescField[]): boolean {
  const [field, ...rest] = path;
  if (!isFieldSet(message, field!)) return false;
  if (rest.length === 0) return true;
  const own = message as unknown as Record<string, unknown>;
  const value = field!.oneof ? (own[field!.oneof.localName] as { value: Message }).value : own[field!.localName];
  return isSetAlong(value as Message, rest);
}

/** The caller acts on what is its own without the permission: fields that need it are refused, saying why. */
function actOnSelf(req: UnaryRequest | StreamRequest, rules: MethodRules): void {
  const refused = rules.notForSelf.find(({ path }) => isSetAlong(req.message as Message, path));
  if (refused) {
    const on = rules.resource ? ` on the ${rules.resource.kind}` : "";
    const name = refused.path.map((f) => f.name).join(".");
    throw permissionDenied(`${name} needs ${rules.permission}${on}, not only acting on yourself: ${refused.reason}`);
  }
  req.contextValues.set(selfOnlyKey, true);
}
