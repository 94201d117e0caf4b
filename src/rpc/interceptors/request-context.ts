import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RequestContext } from "../../../gen/platform/object/v3alpha/object_pb.js";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
import { holdsAnywhere, isSystemMember } from "../../domain/authz/principal.js";
import { invalidArgument, notFound, permissionDenied } from "../../domain/errors.js";
import { instanceByDomain, instanceById } from "../../domain/instance/queries.js";
import type { Db } from "../../store/db.js";
import type { Store } from "../../store/database.js";
import { orgByIdOrDomain } from "../../domain/org/queries.js";
import { orgKey, principalKey, projectGrantKey, systemKey, tenantKey } from "../context.js";
import { projectGrantInContext } from "../../domain/project-grant/queries.js";
import { AUTHENTICATED, PUBLIC, requireRules, type ContextKindName } from "../method-rules.js";
import { invalidRequest, validateRequest } from "./validation.js";

const KIND_OF_CASE: Record<string, ContextKindName> = {
  system: "system",
  instanceId: "instance",
  instanceDomain: "instance",
  orgId: "org",
  orgDomain: "org",
  projectGrantId: "project_grant",
};

/**
 * The request's `ctx` selects the context it acts in (absent: the instance of the Host
 * header; an organization always one of that instance). Which kinds a service accepts is
 * declared in its proto options. Another instance
 * than the Host's is reachable only with a system membership; to anyone else it is NotFound,
 * exactly like one that does not exist, so that no caller learns which instances exist.
 */
export function requestContextInterceptor(store: Pick<Store, "forRequest">, access: AccessEpoch): Interceptor {
  // Organizations named by id, per process until an access change: deleting or deactivating
  // one advances the epoch everywhere. Domains move between organizations without such a
  // change, so lookups by domain are not cached.
  const byId = new AccessCache<string, { id: string }>(access, 30_000);
  const orgOf = (db: Db, instanceId: string, selected: { case: "orgId" | "orgDomain"; value: string }) =>
    selected.case === "orgDomain"
      ? orgByIdOrDomain(db, instanceId, { domain: selected.value })
      : byId.get(`${instanceId}/${selected.value}`, () => orgByIdOrDomain(db, instanceId, { id: selected.value }));
  return (next) => async (req) => {
    const rules = requireRules(req.method);
    if (!rules.ctxField || req.stream) return next(req);
    const ctx = (req.message as unknown as Record<string, RequestContext | undefined>)[rules.ctxField.localName];
    if (!ctx) return next(req);
    // The ctx is used before the validation interceptor runs: its own rules are checked here.
    const checked = validateRequest(req);
    const ctxField = rules.ctxField;
    const invalid = checked.kind === "invalid" ? checked.violations.filter((v) => v.field[0]?.kind === "field" && v.field[0].number === ctxField.number) : [];
    if (invalid.length > 0) throw invalidRequest(invalid);
    const selected = ctx.type;
    // Validation (above) requires exactly one.
    if (selected.case === undefined) throw new Error("ctx without a context");
    const kind = KIND_OF_CASE[selected.case]!;
    if (!rules.contexts.has(kind)) {
      throw invalidArgument(`${req.method.parent.name} acts in ${[...rules.contexts].join(" or ")} contexts: ctx.${selected.case} is not accepted`);
    }
    const host = req.contextValues.get(tenantKey);
    const { db } = store.forRequest(req.signal);
    // As for resources: only who may act in some organization learns which ones exist.
    const refuseUnknown = (what: string) => {
      const principal = req.contextValues.get(principalKey);
      const open = rules.permission === PUBLIC || rules.permission === AUTHENTICATED;
      if (!open && !(principal && host && holdsAnywhere(principal, rules.permission, host.id)))
        return permissionDenied(`missing permission ${rules.permission}`);
      return notFound(what);
    };
    if (selected.case === "orgId" || selected.case === "orgDomain") {
      // An organization of the Host's instance: there is no way to name another's.
      const org = host && (await orgOf(db, host.id, selected));
      if (!org) throw refuseUnknown(`no organization ${selected.case === "orgId" ? "with the id" : "has the domain"} "${selected.value}"`);
      req.contextValues.set(orgKey, { id: org.id });
      return next(req);
    }
    if (selected.case === "projectGrantId") {
      // A project grant lies inside the organization it was given to: permissions held
      // there hold in it, so the request acts in that organization too.
      const grant = host && (await projectGrantInContext(db, host.id, selected.value));
      if (!grant) throw refuseUnknown(`no project grant with the id "${selected.value}"`);
      req.contextValues.set(projectGrantKey, grant);
      req.contextValues.set(orgKey, { id: grant.orgId });
      return next(req);
    }
    const principal = req.contextValues.get(principalKey);
    if (selected.case === "system") {
      // The system always exists: refusing it tells nobody anything.
      if (!principal || !isSystemMember(principal)) throw permissionDenied("the system context needs a system membership");
      req.contextValues.set(systemKey, true);
      return next(req);
    }
    const value = selected.value.toLowerCase();
    const instance = selected.case === "instanceId" ? await instanceById(db, selected.value) : await instanceByDomain(db, value);
    const reachable = instance && (instance.id === host?.id || (principal !== undefined && isSystemMember(principal)));
    if (!instance || !reachable) throw notFound(`no instance ${selected.case === "instanceId" ? "with the id" : "serves the domain"} "${selected.value}"`);
    // Acting inside a blocked instance is refused from anywhere; the system context (and
    // PlatformInstances naming it by id) is how a system member reaches it.
    if (instance.blocked) throw new ConnectError("instance is blocked", Code.ResourceExhausted);
    req.contextValues.set(tenantKey, instance);
    return next(req);
  };
}
