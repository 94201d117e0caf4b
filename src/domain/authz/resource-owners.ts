import type { Db } from "../../store/db.js";
import { instanceById } from "../instance/queries.js";
import { orgOfDomain } from "../org-domain/queries.js";
import { orgByIdOrDomain } from "../org/queries.js";
import { orgOfUser } from "../user/queries.js";
import type { ContextRef } from "../context.js";
import { idpOwner } from "../idp/queries.js";
import { orgOfProject } from "../project/queries.js";
import { ownerOfUserGrant } from "../grant/queries.js";
import { granteeOfProjectGrant, granteesOfProject, orgOfProjectGrant, type Grantee } from "../project-grant/queries.js";
import { orgOfApp } from "../app/queries.js";
import { hasUserSchema } from "../user-schema/queries.js";
import { holdsSessionToken, sessionOwner } from "../session/queries.js";

/** The context that owns a resource: an instance, or an organization of it. */
export interface ResourceOwner {
  instanceId: string;
  orgId?: string;
  /** The user the resource is of (a user itself, a session's user): who may act on it as "self". */
  userId?: string;
  /** The project grant it was made under (a user grant): where PROJECT_GRANT_OWNER acts. */
  projectGrantId?: string;
}

type OwnerLookup = (db: Db, instanceId: string, key: string) => Promise<ResourceOwner | undefined>;

const inOrg =
  (lookup: (db: Db, instanceId: string, key: string) => Promise<string | undefined>): OwnerLookup =>
  async (db, instanceId, key) => {
    const orgId = await lookup(db, instanceId, key);
    return orgId === undefined ? undefined : { instanceId, orgId };
  };

/**
 * The context that owns a resource, by the kind a method declares in its
 * `(platform.options.v1.method).resource` option: requests that name a resource are
 * authorized in that resource's context. Resources of organizations are looked up in the
 * request's instance; an instance is its own owner, found wherever it is (system members act
 * on every instance). Undefined when there is no such resource.
 */
export const RESOURCE_OWNERS: Record<string, OwnerLookup> = {
  organization: inOrg(async (db, instanceId, id) => (await orgByIdOrDomain(db, instanceId, { id }))?.id),
  domain: inOrg(orgOfDomain),
  user: async (db, instanceId, id) => {
    const orgId = await orgOfUser(db, instanceId, id);
    return orgId === undefined ? undefined : { instanceId, orgId, userId: id };
  },
  session: sessionOwner,
  project: inOrg(orgOfProject),
  user_grant: async (db, instanceId, id) => {
    const owner = await ownerOfUserGrant(db, instanceId, id);
    return owner && { instanceId, orgId: owner.orgId, ...(owner.projectGrantId && { projectGrantId: owner.projectGrantId }) };
  },
  project_grant: inOrg(orgOfProjectGrant),
  app: inOrg(orgOfApp),
  instance: async (db, _instanceId, id) => ((await instanceById(db, id)) ? { instanceId: id } : undefined),
  user_schema: async (db, instanceId, id) => ((await hasUserSchema(db, instanceId, id)) ? { instanceId } : undefined),
};

/**
 * Kinds whose owner never changes while the resource exists (a user, a project, an app or a
 * grant never moves to another organization; an organization or instance owns itself), so a
 * lookup may be cached. Not domains, which move between organizations, nor sessions, which
 * gain their user with a check.
 */
export const FIXED_OWNER_KINDS: ReadonlySet<string> = new Set([
  "organization",
  "user",
  "project",
  "user_grant",
  "project_grant",
  "app",
  "instance",
  "user_schema",
]);

/**
 * The organizations a resource of a project is granted to, for methods declared
 * `for_grantees` (options.proto): those may act on it from their own organization. Every
 * change of a project grant advances the access epoch, so a lookup may be cached like an owner.
 */
export const RESOURCE_GRANTEES: Record<string, (db: Db, instanceId: string, key: string) => Promise<Grantee[]>> = {
  project: granteesOfProject,
  project_grant: granteeOfProjectGrant,
};

/**
 * Reusable resources (spec §1): defined in the system, an instance or an organization, and
 * reused below. Their ids are unique across all contexts, so they are found without one.
 */
export const REUSABLE_OWNERS: Record<string, (db: Db, id: string) => Promise<ContextRef | undefined>> = {
  idp: idpOwner,
};

export function isReusableKind(kind: string): boolean {
  return Object.hasOwn(REUSABLE_OWNERS, kind);
}

export function isResourceKind(kind: string): boolean {
  return Object.hasOwn(RESOURCE_OWNERS, kind) || isReusableKind(kind);
}

/**
 * Resources that carry a secret of their own (a session's token): a request giving it, in the
 * field its method names as `token_field`, needs no permission.
 */
export const RESOURCE_TOKENS: Record<string, (db: Db, instanceId: string, id: string, token: string) => Promise<boolean>> = {
  session: holdsSessionToken,
};
