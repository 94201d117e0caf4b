import type { OrgDomainRow } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

/** How a domain's ownership is proven: a DNS TXT record or a file served over HTTP. */
export type DomainValidationType = NonNullable<OrgDomainRow["validation_type"]>;

export interface DomainView {
  details: ObjectDetails;
  domain: string;
  orgId: string;
  isPrimary: boolean;
  isVerified: boolean;
  isGenerated: boolean;
}

/** A domain has no id of its own: its name is the id, its organization the owner. */
export function domainDetails(row: Pick<OrgDomainRow, "domain" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.domain, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export function domainView(row: OrgDomainRow): DomainView {
  return {
    details: domainDetails(row),
    domain: row.domain,
    orgId: row.org_id,
    isPrimary: row.is_primary,
    isVerified: row.is_verified,
    isGenerated: row.is_generated,
  };
}
