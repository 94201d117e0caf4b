import {
  ProjectFieldName,
  ProjectRoleFieldName,
  ProjectState,
  type GetProject,
  type GetProjectRole,
  type ProjectRoleSearchFilter,
  type ProjectSearchFilter,
} from "../../../../gen/platform/resources/project/v3alpha/project_pb.js";
import type { ProjectState as StoredState, ProjectView, RoleView } from "../../../domain/project/model.js";
import type { ProjectFilter, ProjectSearch, RoleFilter } from "../../../domain/project/queries.js";
import { detailsToProto, textMatchFromProto } from "../convert.js";

const STATES: Record<StoredState, ProjectState> = {
  active: ProjectState.ACTIVE,
  inactive: ProjectState.INACTIVE,
};

export function projectToProto(view: ProjectView): Omit<GetProject, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    project: {
      $typeName: "platform.resources.project.v3alpha.Project",
      name: view.name,
      projectRoleAssertion: view.roleAssertion,
      projectRoleCheck: view.roleCheck,
    },
    state: STATES[view.state],
  };
}

export function roleToProto(view: RoleView): Omit<GetProjectRole, "$typeName"> {
  return {
    details: detailsToProto(view.details),
    role: { $typeName: "platform.resources.project.v3alpha.ProjectRole", key: view.key, displayName: view.displayName, group: view.group },
  };
}

export function projectFilterFromProto({ filter }: ProjectSearchFilter): ProjectFilter {
  switch (filter.case) {
    case "inIds":
      return { ids: filter.value.ids };
    case "name":
      return { name: { value: filter.value.name, match: textMatchFromProto(filter.value.method) } };
    case "state":
      return { state: filter.value.state === ProjectState.ACTIVE ? "active" : "inactive" };
    default:
      // Validation requires exactly one filter.
      throw new Error("project filter without a case");
  }
}

const SORT: Record<ProjectFieldName, ProjectSearch["sort"]> = {
  [ProjectFieldName.UNSPECIFIED]: "created_at",
  [ProjectFieldName.ID]: "id",
  [ProjectFieldName.CREATION_DATE]: "created_at",
  [ProjectFieldName.CHANGE_DATE]: "change_date",
  [ProjectFieldName.NAME]: "name",
};

export const projectSortFromProto = (column: ProjectFieldName) => SORT[column];

export function roleFilterFromProto({ filter }: ProjectRoleSearchFilter): RoleFilter {
  switch (filter.case) {
    case "key":
      return { field: "key", value: filter.value.key, match: textMatchFromProto(filter.value.method) };
    case "displayName":
      return { field: "displayName", value: filter.value.displayName, match: textMatchFromProto(filter.value.method) };
    case "group":
      return { field: "group", value: filter.value.group, match: textMatchFromProto(filter.value.method) };
    default:
      // Validation requires exactly one filter.
      throw new Error("role filter without a case");
  }
}

const ROLE_SORT: Record<ProjectRoleFieldName, "key" | "displayName" | "group"> = {
  [ProjectRoleFieldName.UNSPECIFIED]: "key",
  [ProjectRoleFieldName.KEY]: "key",
  [ProjectRoleFieldName.DISPLAY_NAME]: "displayName",
  [ProjectRoleFieldName.GROUP]: "group",
};

export const roleSortFromProto = (column: ProjectRoleFieldName) => ROLE_SORT[column];
