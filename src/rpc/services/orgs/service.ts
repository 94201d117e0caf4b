import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { PlatformOrganizations } from "../../../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import type { AccessEpoch } from "../../../cache/access-epoch.js";
import { assertMayManageUsers } from "../../../domain/authz/manage.js";
import { setDefaultOrg } from "../../../domain/instance/commands.js";
import { defaultOrgId } from "../../../domain/instance/queries.js";
import { addMembership } from "../../../domain/membership/commands.js";
import { addOrg, removeOrg, renameOrg, setOrgState } from "../../../domain/org/commands.js";
import { orgRowForUpdate } from "../../../domain/org/row-lock.js";
import { getOrg, searchOrgs } from "../../../domain/org/queries.js";
import type { Store } from "../../../store/database.js";
import type { Tx } from "../../../store/db.js";
import { page } from "../../../store/search.js";
import { actorOf, principalOf, tenantOf, visibleOrgs } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { orgFilterFromProto, orgSortFromProto, orgToProto } from "./convert.js";

export interface OrgsDeps {
  store: Pick<Store, "forRequest">;
  access: AccessEpoch;
}

/** Translates between the API and the domain; the rules live in domain/org. */
export function orgsService({ store, access }: OrgsDeps): ServiceImpl<typeof PlatformOrganizations> {
  const { changingAccess, database, write } = handlerStore(store, access);
  /** Changes that reach every user of an organization need the power of each of them. */
  const onOrgUsers = <T>(ctx: HandlerContext, orgId: string, fn: (tx: Tx) => Promise<T>) =>
    changingAccess(ctx, async (tx) => {
      const instanceId = tenantOf(ctx).id;
      await orgRowForUpdate(tx, instanceId, orgId);
      await assertMayManageUsers(tx, instanceId, principalOf(ctx), { orgId });
      return fn(tx);
    });

  return {
    async createOrganization(req, ctx) {
      const { name, admins } = req.organization!;
      const actor = actorOf(ctx);
      // New owners must not wait for a cached principal of theirs to expire.
      const org = await (admins.length > 0 ? changingAccess : write)(ctx, async (tx) => {
        const created = await addOrg(tx, actor, { name });
        for (const userId of admins) {
          await addMembership(tx, actor, { userId, contextType: "org", contextId: created.id, roles: ["ORG_OWNER"] }, principalOf(ctx));
        }
        return created;
      });
      return { details: detailsToProto(org.details), primaryDomain: org.domain };
    },
    async getOrganization(req, ctx) {
      return { organization: orgToProto(await getOrg(database(ctx).db, tenantOf(ctx).id, req.id)) };
    },
    async searchOrganizations(req, ctx) {
      const p = page(req.query);
      const found = await searchOrgs(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(orgFilterFromProto),
        sort: orgSortFromProto(req.sortingColumn),
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, orgToProto), sortingColumn: req.sortingColumn };
    },
    async patchOrganization(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => renameOrg(tx, actorOf(ctx), req.id, req.organization!.name))) };
    },
    async deleteOrganization(req, ctx) {
      return { details: detailsToProto(await onOrgUsers(ctx, req.id, (tx) => removeOrg(tx, actorOf(ctx), req.id))) };
    },
    async deactivateOrganization(req, ctx) {
      return { details: detailsToProto(await onOrgUsers(ctx, req.id, (tx) => setOrgState(tx, actorOf(ctx), req.id, "inactive"))) };
    },
    async reactivateOrganization(req, ctx) {
      return { details: detailsToProto(await onOrgUsers(ctx, req.id, (tx) => setOrgState(tx, actorOf(ctx), req.id, "active"))) };
    },
    async setAsInstanceDefault(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => setDefaultOrg(tx, actorOf(ctx), req.id))) };
    },
    async getInstanceDefault(_req, ctx) {
      const { db } = database(ctx);
      const instanceId = tenantOf(ctx).id;
      return { organization: orgToProto(await getOrg(db, instanceId, await defaultOrgId(db, instanceId))) };
    },
  };
}
