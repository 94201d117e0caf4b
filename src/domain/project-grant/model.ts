import type { Selectable } from "kysely";
import type { ProjectGrantTable } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

export const AGGREGATE = "project_grant";

export type ProjectGrantRow = Selectable<ProjectGrantTable>;
export type ProjectGrantState = ProjectGrantRow["state"];

export interface ProjectGrantView {
  details: ObjectDetails;
  projectId: string;
  grantedOrgId: string;
  roleKeys: string[];
  state: ProjectGrantState;
}

/** A project grant is owned by the project's organization, the one that gives. */
export function projectGrantDetails(row: Pick<ProjectGrantRow, "id" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export function projectGrantView(row: ProjectGrantRow): ProjectGrantView {
  return {
    details: projectGrantDetails(row),
    projectId: row.project_id,
    grantedOrgId: row.granted_org_id,
    roleKeys: [...row.role_keys].sort(),
    state: row.state,
  };
}
