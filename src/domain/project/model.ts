import type { Selectable } from "kysely";
import type { ProjectRoleTable, ProjectTable } from "../../store/schema.js";
import type { ObjectDetails } from "../details.js";

export type ProjectState = Selectable<ProjectTable>["state"];

/** Projects and their roles are events of one aggregate per project. */
export const AGGREGATE = "project";

export type ProjectRow = Selectable<ProjectTable>;
export type ProjectRoleRow = Selectable<ProjectRoleTable>;

export interface ProjectView {
  details: ObjectDetails;
  name: string;
  roleAssertion: boolean;
  roleCheck: boolean;
  state: ProjectState;
}

export interface RoleView {
  details: ObjectDetails;
  key: string;
  displayName: string;
  group: string;
}

export function projectDetails(row: Pick<ProjectRow, "id" | "org_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "org", id: row.org_id } };
}

export function projectView(row: ProjectRow): ProjectView {
  return { details: projectDetails(row), name: row.name, roleAssertion: row.role_assertion, roleCheck: row.role_check, state: row.state };
}

/** A role carries its project's sequence and change date: its changes are the project's events. */
export function roleView(role: ProjectRoleRow, project: Pick<ProjectRow, "org_id" | "sequence" | "change_date">): RoleView {
  return {
    details: { id: role.key, sequence: project.sequence, changeDate: project.change_date, owner: { type: "org", id: project.org_id } },
    key: role.key,
    displayName: role.display_name,
    group: role.group_name,
  };
}
