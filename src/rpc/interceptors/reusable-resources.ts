import type { UnaryRequest, StreamRequest } from "@connectrpc/connect";
import { hasPermission, holdsAnywhere, isSystemMember, type Principal } from "../../domain/authz/principal.js";
import { REUSABLE_OWNERS } from "../../domain/authz/resource-owners.js";
import { describeContext, encloses, scopeOfContext } from "../../domain/context.js";
import { notFound, permissionDenied } from "../../domain/errors.js";
import type { Db } from "../../store/db.js";
import { askedContext, askedKey } from "../context.js";
import type { MethodRules } from "../method-rules.js";
import { invalidRequest, validateRequest } from "./validation.js";

/**
 * A request naming a reusable resource (spec §1) acts in its `ctx`, which must be the
 * resource's owner, a context reusing it, or one above it that sees its children's; without
 * `ctx` it acts in the owner. The permission is checked in the context acted in. The
 * handler decides what that context may change (only its own state policy, below the owner).
 */
export async function authorizeReusable(
  db: Db,
  req: UnaryRequest | StreamRequest,
  permission: string,
  resource: NonNullable<MethodRules["resource"]>,
  principal: Principal,
  hostInstanceId: string,
): Promise<void> {
  const id = (req.message as unknown as Record<string, string>)[resource.field.localName]!;
  const hasCtx = (req.message as unknown as Record<string, unknown>).ctx !== undefined;
  const owner = await REUSABLE_OWNERS[resource.kind]!(db, id);
  const asked = hasCtx ? askedContext(req.contextValues) : owner;
  const visible =
    owner !== undefined &&
    asked !== undefined &&
    // Another instance's exists only for who may act in every instance.
    (owner.type === "system" || owner.instanceId === hostInstanceId || isSystemMember(principal)) &&
    (encloses(owner, asked) || encloses(asked, owner));
  if (!visible) {
    const mayKnow = hasCtx
      ? hasPermission(principal, permission, scopeOfContext(askedContext(req.contextValues)))
      : holdsAnywhere(principal, permission, hostInstanceId);
    if (!mayKnow) throw permissionDenied(`missing permission ${permission}`);
    // As for standard resources: who may know gets the precise answer to a malformed id.
    const checked = req.stream ? undefined : validateRequest(req);
    if (checked?.kind === "invalid") throw invalidRequest(checked.violations);
    throw notFound(`${resource.kind} ${id} not found${hasCtx ? ` in ${describeContext(askedContext(req.contextValues))}` : ""}`);
  }
  if (!hasPermission(principal, permission, scopeOfContext(asked))) {
    const hint = hasCtx ? "" : `; it belongs to ${describeContext(owner)}: name the context you act in with ctx`;
    throw permissionDenied(`missing permission ${permission} in ${describeContext(asked)}${hint}`);
  }
  if (!hasCtx) req.contextValues.set(askedKey, asked);
}
