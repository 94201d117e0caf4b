import type { Selectable } from "kysely";
import type { UserGrantTable } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

export const AGGREGATE = "user_grant";

export type UserGrantRow = Selectable<UserGrantTable>;

export interface UserGrantView {
  details: ObjectDetails;
  projectId: string;
  userId: string;
  roleKeys: string[];
  userOrgId: string;
  /** The project grant it was made under; '' when the project's organization made it. */
  projectGrantId: string;
}

export function grantDetails(row: Pick<UserGrantRow, "id" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export function grantView(row: UserGrantRow & { user_org_id: string }): UserGrantView {
  return {
    details: grantDetails(row),
    projectId: row.project_id,
    userId: row.user_id,
    roleKeys: [...row.role_keys].sort(),
    userOrgId: row.user_org_id,
    projectGrantId: row.project_grant_id,
  };
}
