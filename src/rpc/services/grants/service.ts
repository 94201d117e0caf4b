import type { ServiceImpl } from "@connectrpc/connect";
import { UserGrantFieldName, type GetUserGrant, type UserGrantSearchFilter } from "../../../../gen/platform/resources/grant/v3alpha/grant_pb.js";
import type { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { addUserGrant, patchUserGrant, removeUserGrant } from "../../../domain/grant/commands.js";
import type { UserGrantView } from "../../../domain/grant/model.js";
import { getUserGrant, searchUserGrants, type UserGrantFilter } from "../../../domain/grant/queries.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actorOf, tenantOf, visibleOrgs } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";

function grantToProto(view: UserGrantView): Omit<GetUserGrant, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    projectId: view.projectId,
    grant: { $typeName: "platform.resources.grant.v3alpha.UserGrant", userId: view.userId, roleKeys: view.roleKeys },
    userOrgId: view.userOrgId,
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

/** Translates between the API and the domain; the rules live in domain/grant. */
export function grantsService({ store }: { store: Pick<Store, "forRequest"> }): ServiceImpl<typeof PlatformGrants> {
  const { database, write } = handlerStore(store);
  return {
    async createUserGrant(req, ctx) {
      const { userId, roleKeys } = req.grant!;
      return { details: detailsToProto(await write(ctx, (tx) => addUserGrant(tx, actorOf(ctx), req.projectId, { userId, roleKeys }))) };
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
      });
      return { ...searchResult(found, p, grantToProto), sortingColumn: req.sortingColumn };
    },
  };
}
