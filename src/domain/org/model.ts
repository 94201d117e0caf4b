import type { OrgRow } from "../../store/schema.js";
import { instanceOwnedDetails, type ObjectDetails } from "../details.js";

/** An organization's state: a deactivated one's users cannot sign in. */
export type OrgState = OrgRow["state"];

export const AGGREGATE = "org";

export interface OrgView {
  details: ObjectDetails;
  name: string;
  state: OrgState;
  primaryDomain: string;
  isDefault: boolean;
}

export function orgView(row: OrgRow & { primary_domain: string | null; is_default: boolean }): OrgView {
  return {
    details: instanceOwnedDetails(row),
    name: row.name,
    state: row.state,
    primaryDomain: row.primary_domain ?? "",
    isDefault: row.is_default,
  };
}

/**
 * The DNS label an organization's generated domain starts with: its name in lower case,
 * every run of other characters than a-z and 0-9 one hyphen ("ACME Corp." → "acme-corp").
 * Names without such characters get "org". Kept to 57 characters so that a "-<n>" suffix
 * for a taken label still fits the 63 of a DNS label.
 */
export function domainLabel(name: string): string {
  const label = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 57)
    .replace(/-+$/, "");
  return label || "org";
}
