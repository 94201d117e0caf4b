import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  ProjectGrantFieldName,
  ProjectGrantState,
  UserGrantFieldName,
  type GetProjectGrant,
  type GetUserGrant,
  type ProjectGrantSearchFilter,
  type UserGrantSearchFilter,
} from "../../../../gen/platform/resources/grant/v3alpha/grant_pb.js";
import type { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { addUserGrant, patchUserGrant, removeUserGrant } from "../../../domain/grant/commands.js";
import type { UserGrantView } from "../../../domain/grant/model.js";
import { getUserGrant, searchUserGrants, type UserGrantFilter } from "../../../domain/grant/queries.js";
import { addProjectGrant, patchProjectGrant, removeProjectGrant, setProjectGrantState } from "../../../domain/project-grant/commands.js";
import type { ProjectGrantState as StoredState, ProjectGrantView } from "../../../domain/project-grant/model.js";
import { getProjectGrant, searchProjectGrants, type ProjectGrantFilter } from "../../../domain/project-grant/queries.js";
import type { ObjectDetails } from "../../../domain/details.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actorOf, orgKey, tenantOf, visibleOrgs, visibleProjectGrantsKey } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";

function grantToProto(view: UserGrantView): Omit<GetUserGrant, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    projectId: view.projectId,
    grant: { $typeName: "platform.resources.grant.v3alpha.UserGrant", userId: view.userId, roleKeys: view.roleKeys },
    userOrgId: view.userOrgId,
    projectGrantId: view.projectGrantId,
  };
}

function filterFromProto({ filter }: UserGrantSearchFilter): UserGrantFilter {
  switch (filter.case) {
    case "userId":
      return { userId: filter.value.userId };
    case "projectId":
      return { projectId: filter.value.projectId };
    case "roleKey":
      return { roleKey: filter.value.roleKey };
    default:
      // Validation requires exactly one filter.
      throw new Error("user grant filter without a case");
  }
}

const PROJECT_GRANT_STATES: Record<StoredState, ProjectGrantState> = {
  active: ProjectGrantState.ACTIVE,
  inactive: ProjectGrantState.INACTIVE,
};

function projectGrantToProto(view: ProjectGrantView): Omit<GetProjectGrant, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    projectId: view.projectId,
    grantedOrgId: view.grantedOrgId,
    roleKeys: view.roleKeys,
    state: PROJECT_GRANT_STATES[view.state],
  };
}

function projectGrantFilterFromProto({ filter }: ProjectGrantSearchFilter): ProjectGrantFilter {
  switch (filter.case) {
    case "projectId":
      return { projectId: filter.value.projectId };
    case "grantedOrgId":
      return { grantedOrgId: filter.value.grantedOrgId };
    case "roleKey":
      return { roleKey: filter.value.roleKey };
    default:
      // Validation requires exactly one filter.
      throw new Error("project grant filter without a case");
  }
}

/** Translates between the API and the domain; the rules live in domain/grant and domain/project-grant. */
export function grantsService({ store, access }: { store: Pick<Store, "forRequest">; access: AccessEpoch }): ServiceImpl<typeof PlatformGrants> {
  // Project grants decide who may act on a project (authorization caches that until the next
  // change of access), so every change of one is a change of access.
  const { changingAccess, database, write } = handlerStore(store, access);
  const changed = async (ctx: HandlerContext, fn: (tx: Tx) => Promise<ObjectDetails>) => ({
    details: detailsToProto(await changingAccess(ctx, fn)),
  });
  return {
    async createUserGrant(req, ctx) {
      const { userId, roleKeys } = req.grant!;
      // The organization the request acts for: the project's own, or (for_grantees) one it is granted to.
      const byOrg = ctx.values.get(orgKey)?.id;
      return { details: detailsToProto(await write(ctx, (tx) => addUserGrant(tx, actorOf(ctx), req.projectId, { userId, roleKeys }, byOrg))) };
    },
    async getUserGrant(req, ctx) {
      return { grant: grantToProto(await getUserGrant(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    async patchUserGrant(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => patchUserGrant(tx, actorOf(ctx), req.id, req.grant!.roleKeys))) };
    },
    async deleteUserGrant(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => removeUserGrant(tx, actorOf(ctx), req.id))) };
    },
    async searchUserGrants(req, ctx) {
      const p = page(req.query);
      const found = await searchUserGrants(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(filterFromProto),
        sort: req.sortingColumn === UserGrantFieldName.CHANGE_DATE ? "change_date" : "created_at",
        page: p,
        within: visibleOrgs(ctx),
        withinProjectGrants: ctx.values.get(visibleProjectGrantsKey),
      });
      return { ...searchResult(found, p, grantToProto), sortingColumn: req.sortingColumn };
    },
    createProjectGrant(req, ctx) {
      const { grantedOrgId, roleKeys } = req.grant!;
      return changed(ctx, (tx) => addProjectGrant(tx, actorOf(ctx), req.projectId, { grantedOrgId, roleKeys }));
    },
    async getProjectGrant(req, ctx) {
      return { grant: projectGrantToProto(await getProjectGrant(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    patchProjectGrant(req, ctx) {
      return changed(ctx, (tx) => patchProjectGrant(tx, actorOf(ctx), req.id, req.grant!.roleKeys));
    },
    deactivateProjectGrant(req, ctx) {
      return changed(ctx, (tx) => setProjectGrantState(tx, actorOf(ctx), req.id, "inactive"));
    },
    reactivateProjectGrant(req, ctx) {
      return changed(ctx, (tx) => setProjectGrantState(tx, actorOf(ctx), req.id, "active"));
    },
    deleteProjectGrant(req, ctx) {
      return changed(ctx, (tx) => removeProjectGrant(tx, actorOf(ctx), req.id));
    },
    async searchProjectGrants(req, ctx) {
      const p = page(req.query);
      const found = await searchProjectGrants(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(projectGrantFilterFromProto),
        sort: req.sortingColumn === ProjectGrantFieldName.CHANGE_DATE ? "change_date" : "created_at",
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, projectGrantToProto), sortingColumn: req.sortingColumn };
    },
  };
}
