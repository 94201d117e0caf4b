import type { Db } from "../../store/eventstore.js";
import { orgOfDomain } from "../org-domain/queries.js";
import { orgByIdOrDomain } from "../org/queries.js";
import { orgOfUser } from "../user/queries.js";

/**
 * The organization that owns a resource, by the kind a method declares in its
 * `(platform.options.v1.method).resource` option: requests that name a resource are
 * authorized in that resource's context. Undefined when the instance has no such resource.
 */
export const RESOURCE_OWNERS: Record<string, (db: Db, instanceId: string, key: string) => Promise<string | undefined>> = {
  organization: async (db, instanceId, id) => (await orgByIdOrDomain(db, instanceId, { id }))?.id,
  domain: orgOfDomain,
  user: orgOfUser,
};

export function isResourceKind(kind: string): boolean {
  return Object.hasOwn(RESOURCE_OWNERS, kind);
}
