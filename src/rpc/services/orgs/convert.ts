import {
  OrganizationFieldName,
  OrganizationState,
  type GetOrganization,
  type OrganizationSearchFilter,
} from "../../../../gen/platform/resources/org/v3alpha/organization_pb.js";
import type { OrgState, OrgView } from "../../../domain/org/model.js";
import type { OrgFilter, OrgSortColumn } from "../../../domain/org/queries.js";
import { detailsToProto, textMatchFromProto } from "../convert.js";

const STATES: Record<OrgState, OrganizationState> = {
  active: OrganizationState.ACTIVE,
  inactive: OrganizationState.INACTIVE,
};

export function orgToProto(view: OrgView): Omit<GetOrganization, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    name: view.name,
    state: STATES[view.state],
    primaryDomain: view.primaryDomain,
    isDefault: view.isDefault,
  };
}

export function orgFilterFromProto({ filter }: OrganizationSearchFilter): OrgFilter {
  switch (filter.case) {
    case "inIds":
      return { ids: filter.value.ids };
    case "name":
      return { name: { value: filter.value.name, match: textMatchFromProto(filter.value.method) } };
    case "domain":
      return { domain: { value: filter.value.domain, match: textMatchFromProto(filter.value.method) } };
    case "state":
      return { state: filter.value.state === OrganizationState.ACTIVE ? "active" : "inactive" };
    default:
      // Validation requires exactly one filter.
      throw new Error("organization filter without a case");
  }
}

const SORT: Record<OrganizationFieldName, OrgSortColumn> = {
  [OrganizationFieldName.UNSPECIFIED]: "created_at",
  [OrganizationFieldName.ID]: "id",
  [OrganizationFieldName.CREATION_DATE]: "created_at",
  [OrganizationFieldName.CHANGE_DATE]: "change_date",
  [OrganizationFieldName.NAME]: "name",
  [OrganizationFieldName.STATE]: "state",
  [OrganizationFieldName.PRIMARY_DOMAIN]: "primary_domain",
};

export function orgSortFromProto(column: OrganizationFieldName): OrgSortColumn {
  return SORT[column];
}
