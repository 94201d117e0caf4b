import { DomainFieldName, type DomainSearchFilter, type GetDomain } from "../../../../gen/platform/resources/domain/v3alpha/domain_pb.js";
import type { DomainView } from "../../../domain/org-domain/model.js";
import type { DomainFilter, DomainSortColumn } from "../../../domain/org-domain/queries.js";
import { detailsToProto, textMatchFromProto } from "../convert.js";

export function domainToProto(view: DomainView): Omit<GetDomain, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    domain: view.domain,
    isPrimary: view.isPrimary,
    isVerified: view.isVerified,
    isGenerated: view.isGenerated,
  };
}

export function domainFilterFromProto({ filter }: DomainSearchFilter): DomainFilter {
  switch (filter.case) {
    case "domain":
      return { domain: { value: filter.value.domain, match: textMatchFromProto(filter.value.method) } };
    case "primary":
      return { primary: filter.value.isPrimary };
    case "verified":
      return { verified: filter.value.isVerified };
    default:
      // Validation requires exactly one filter.
      throw new Error("domain filter without a case");
  }
}

const SORT: Record<DomainFieldName, DomainSortColumn> = {
  [DomainFieldName.UNSPECIFIED]: "created_at",
  [DomainFieldName.DOMAIN]: "domain",
  [DomainFieldName.CREATION_DATE]: "created_at",
  [DomainFieldName.PRIMARY]: "is_primary",
  [DomainFieldName.VERIFIED]: "is_verified",
};

export function domainSortFromProto(column: DomainFieldName): DomainSortColumn {
  return SORT[column];
}
