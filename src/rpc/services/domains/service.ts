import type { ServiceImpl } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DomainValidationType } from "../../../../gen/platform/resources/domain/v3alpha/domain_pb.js";
import { PlatformDomains } from "../../../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { randomAlphanumeric } from "../../../crypto/tokens.js";
import { addDomain, removeDomain, setPrimaryDomain } from "../../../domain/org-domain/commands.js";
import { searchDomains } from "../../../domain/org-domain/queries.js";
import { challengeLocations, generateValidation, markVerified, pendingValidation } from "../../../domain/org-domain/validation.js";
import { failedPrecondition } from "../../../domain/errors.js";
import { checkChallenge, type ChallengeClients } from "../../../org-domain-checks/check.js";
import type { Store } from "../../../store/database.js";
import type { DomainValidationType as StoredType } from "../../../domain/org-domain/model.js";
import { page } from "../../../store/search.js";
import { actingOrg, actorOf, tenantOf, visibleOrgs } from "../../context.js";
import { handlerStore } from "../writes.js";
import { detailsToProto, searchResult } from "../convert.js";
import { domainFilterFromProto, domainSortFromProto, domainToProto } from "./convert.js";

/** How ValidateDomain looks for tokens, and how long they last (PLATFORM_DOMAIN_VALIDATION_TTL). */
export interface DomainValidationDeps {
  clients: ChallengeClients;
  tokenTtlMs: number;
}

/** Validation of the request makes the type DNS or HTTP. */
const TYPE_FROM_PROTO: Partial<Record<DomainValidationType, StoredType>> = {
  [DomainValidationType.DNS]: "dns",
  [DomainValidationType.HTTP]: "http",
};

/** A token is as long as ZITADEL's: guessing it is hopeless, publishing it easy. */
const TOKEN_LENGTH = 32;

/** Translates between the API and the domain; the rules live in domain/org-domain. */
export function domainsService({
  store,
  domainValidation,
}: {
  store: Pick<Store, "forRequest">;
  domainValidation: DomainValidationDeps;
}): ServiceImpl<typeof PlatformDomains> {
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
    async generateDomainValidation(req, ctx) {
      const type = TYPE_FROM_PROTO[req.type]!;
      const token = randomAlphanumeric(TOKEN_LENGTH);
      const made = await write(ctx, (tx) => generateValidation(tx, actorOf(ctx), req.domain, type, token));
      return {
        details: detailsToProto(made),
        type: req.type,
        token,
        location: challengeLocations(type, made.domain, token, domainValidation.clients.ports)[0]!,
        expirationDate: timestampFromDate(new Date(made.createdAt.getTime() + domainValidation.tokenTtlMs)),
      };
    },
    async validateDomain(req, ctx) {
      // Looked for outside any transaction: the calls take seconds and hold no lock.
      const pending = await pendingValidation(database(ctx).db, tenantOf(ctx).id, req.domain, domainValidation.tokenTtlMs);
      const result = await checkChallenge(domainValidation.clients, pending);
      if (!result.found) throw failedPrecondition(`${pending.domain} is not verified: ${result.finding}`);
      return { details: detailsToProto(await write(ctx, (tx) => markVerified(tx, actorOf(ctx), pending))) };
    },
  };
}
