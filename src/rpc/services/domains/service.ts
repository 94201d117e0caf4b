import type { ServiceImpl } from "@connectrpc/connect";
import { PlatformDomains } from "../../../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { addDomain, removeDomain, setPrimaryDomain } from "../../../domain/org-domain/commands.js";
import { searchDomains } from "../../../domain/org-domain/queries.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { actingOrg, actorOf, tenantOf, visibleOrgs } from "../../context.js";
import { handlerStore } from "../writes.js";
import { detailsToProto, searchResult } from "../convert.js";
import { domainFilterFromProto, domainSortFromProto, domainToProto } from "./convert.js";

/** Translates between the API and the domain; the rules live in domain/org-domain. */
export function domainsService({ store }: { store: Pick<Store, "forRequest"> }): ServiceImpl<typeof PlatformDomains> {
  const { database, write } = handlerStore(store);
  return {
    async addDomain(req, ctx) {
      const orgId = actingOrg(ctx);
      return { details: detailsToProto(await write(ctx, (tx) => addDomain(tx, actorOf(ctx), orgId, req.domain!.domain))) };
    },
    async searchDomains(req, ctx) {
      const p = page(req.query);
      const found = await searchDomains(database(ctx).db, tenantOf(ctx).id, {
        filters: req.filters.map(domainFilterFromProto),
        sort: domainSortFromProto(req.sortingColumn),
        page: p,
        within: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, domainToProto), sortingColumn: req.sortingColumn };
    },
    async deleteDomain(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => removeDomain(tx, actorOf(ctx), req.domain))) };
    },
    async setAsPrimary(req, ctx) {
      return { details: detailsToProto(await write(ctx, (tx) => setPrimaryDomain(tx, actorOf(ctx), req.domain))) };
    },
  };
}
