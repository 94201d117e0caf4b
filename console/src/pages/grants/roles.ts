import { useQuery } from "@connectrpc/connect-query";
import { ProjectRoleFieldName } from "../../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../../gen/platform/resources/project/v3alpha/project_service_pb";
import type { Option } from "../../components/ChoiceInputs";

/** The roles of a project as choices (name and key), once there is a project; a grant gives only these. */
export function useProjectRoleOptions(projectId: string | undefined): { options: Option[]; error: unknown } {
  const roles = useQuery(
    PlatformProjects.method.searchProjectRoles,
    { projectId: projectId ?? "", query: { limit: 1000, asc: true }, sortingColumn: ProjectRoleFieldName.KEY },
    { enabled: Boolean(projectId) },
  );
  const options = (roles.data?.result ?? []).map((r) => ({ value: r.role?.key ?? "", label: `${r.role?.displayName ?? ""} (${r.role?.key ?? ""})` }));
  return { options, error: roles.error };
}
