import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { OwnerType } from "../../../../gen/platform/object/v3alpha/object_pb.js";
import { MembershipFieldName, type MembershipSearchFilter } from "../../../../gen/platform/resources/membership/v3alpha/membership_pb.js";
import { PlatformMemberships } from "../../../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { PERMISSIONS, ROLES } from "../../../domain/authz/roles.js";
import { hasPermission, isSystemMember } from "../../../domain/authz/principal.js";
import type { MembershipContextType, Scope } from "../../../domain/context.js";
import { addMembership, changeMembershipRoles, removeMembership, type MembershipContext } from "../../../domain/membership/commands.js";
import { searchMemberships, type MembershipFilter, type MembershipSearch, type MembershipSortColumn } from "../../../domain/membership/queries.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actorOf, orgKey, principalOf, projectGrantKey, systemKey, tenantOf, visibleOrgs } from "../../context.js";
import { handlerStore } from "../writes.js";
import { detailsToProto, OWNER_TYPES, searchResult } from "../convert.js";

/** The context the request's ctx selected: the system, a project grant, an organization, else the instance. */
function contextOf(ctx: HandlerContext): MembershipContext {
  if (ctx.values.get(systemKey)) return { type: "system", id: "" };
  const projectGrant = ctx.values.get(projectGrantKey);
  if (projectGrant) return { type: "project_grant", id: projectGrant.id };
  const org = ctx.values.get(orgKey);
  return org ? { type: "org", id: org.id } : { type: "instance", id: tenantOf(ctx).id };
}

const CONTEXT_TYPES: Partial<Record<OwnerType, MembershipContextType>> = {
  [OwnerType.SYSTEM]: "system",
  [OwnerType.INSTANCE]: "instance",
  [OwnerType.ORG]: "org",
  [OwnerType.PROJECT_GRANT]: "project_grant",
};

function filterFromProto({ filter }: MembershipSearchFilter): MembershipFilter {
  switch (filter.case) {
    case "user":
      return { userId: filter.value.userId };
    case "contextType":
      return { contextType: CONTEXT_TYPES[filter.value.type]! };
    case "context":
      return { contextId: filter.value.id };
    case "role":
      return { role: filter.value.role };
    default:
      // Validation requires exactly one filter.
      throw new Error("membership filter without a case");
  }
}

const SORT: Record<MembershipFieldName, MembershipSortColumn> = {
  [MembershipFieldName.UNSPECIFIED]: "created_at",
  [MembershipFieldName.USER_ID]: "user_id",
  [MembershipFieldName.CREATION_DATE]: "created_at",
  [MembershipFieldName.CHANGE_DATE]: "change_date",
};

/** Translates between the API and the domain; the rules live in domain/membership and domain/authz. */
export function membershipsService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformMemberships> {
  const { changingAccess, database } = handlerStore(store, access);
  return {
    async createMembership(req, ctx) {
      const { userId, roles } = req.membership!;
      const context = contextOf(ctx);
      const details = await changingAccess(ctx, (tx) =>
        addMembership(tx, actorOf(ctx), { userId, contextType: context.type, contextId: context.id, roles }, principalOf(ctx)),
      );
      return { details: detailsToProto(details) };
    },
    async patchMembership(req, ctx) {
      const details = await changingAccess(ctx, (tx) =>
        changeMembershipRoles(tx, actorOf(ctx), contextOf(ctx), req.userId, req.membership!.roles, principalOf(ctx)),
      );
      return { details: detailsToProto(details) };
    },
    async deleteMembership(req, ctx) {
      const details = await changingAccess(ctx, (tx) => removeMembership(tx, actorOf(ctx), contextOf(ctx), req.userId, principalOf(ctx)));
      return { details: detailsToProto(details) };
    },
    async searchMemberships(req, ctx) {
      const p = page(req.query);
      const context = contextOf(ctx);
      const visible = visibleOrgs(ctx);
      const scope: MembershipSearch["scope"] =
        context.type === "system"
          ? { system: true }
          : context.type === "project_grant"
            ? { projectGrant: context.id }
            : visible
              ? { orgs: visible }
              : { instanceAndOrgs: true };
      const found = await searchMemberships(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(filterFromProto),
        sort: SORT[req.sortingColumn],
        page: p,
        scope,
      });
      return {
        ...searchResult(found, p, (m) => ({
          details: detailsToProto(m.details),
          userId: m.userId,
          context: { type: OWNER_TYPES[m.details.owner.type], id: m.details.owner.id },
          roles: m.roles,
        })),
        sortingColumn: req.sortingColumn,
      };
    },
    listMyPermissions(_req, ctx) {
      const principal = principalOf(ctx);
      const where = contextOf(ctx);
      const instanceId = tenantOf(ctx).id;
      const projectGrant = ctx.values.get(projectGrantKey);
      const scope: Scope =
        where.type === "system"
          ? { system: true }
          : projectGrant
            ? { instanceId, orgId: projectGrant.orgId, projectGrantId: projectGrant.id }
            : { instanceId, ...(where.type === "org" && { orgId: where.id }) };
      return {
        permissions: [...PERMISSIONS].filter((p) => hasPermission(principal, p, scope)).sort(),
        orgIds: [...new Set(principal.grants.filter((g) => g.contextType === "org" && principal.instanceId === instanceId).map((g) => g.contextId))].sort(),
        systemMember: isSystemMember(principal),
      };
    },
    listAvailableRoles(_req, ctx) {
      const { type } = contextOf(ctx);
      return {
        roles: Object.entries(ROLES)
          .filter(([, role]) => role.context === type)
          .map(([name, role]) => ({ name, permissions: [...role.permissions] })),
      };
    },
  };
}
