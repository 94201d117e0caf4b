import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { useForm } from "react-hook-form";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { ProjectState, type GetProject } from "../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { CheckboxInput } from "../components/ChoiceInputs";
import { ConfirmAction } from "../components/ConfirmAction";
import { SettingsForm } from "../components/SettingsForm";
import { StateToggle } from "../components/StateToggle";
import { TextInput } from "../components/TextInput";
import { ResourceTabs, TABS } from "./events/ResourceTabs";
import { Apps } from "./project/Apps";
import { ProjectGrants } from "./project/ProjectGrants";
import { Roles } from "./project/Roles";
import { UserGrants } from "./project/UserGrants";

/**
 * One project: its name and role settings, its state, deleting it; its roles, its
 * applications, the organizations it is granted to and the user grants that give its roles.
 */
export function Project() {
  const { projectId } = useParams({ from: "/projects/$projectId" });
  const { may } = usePermissions();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const found = useQuery(PlatformProjects.method.getProject, { id: projectId });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformProjects, cardinality: undefined }) });
  const deactivate = useMutation(PlatformProjects.method.deactivateProject, { onSuccess: refresh });
  const reactivate = useMutation(PlatformProjects.method.reactivateProject, { onSuccess: refresh });
  const remove = useMutation(PlatformProjects.method.deleteProject);
  const p = found.data?.project;
  if (found.error) return <ApiError error={found.error} />;
  if (!p) return <p role="status">Loading…</p>;
  const active = p.state === ProjectState.ACTIVE;
  const name = p.project?.name ?? "";
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <span className={active ? "badge ok" : "badge off"}>{active ? "Active" : "Inactive"}</span>
      </div>
      <ResourceTabs label="Project" tabs={TABS.project(projectId)} />
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{projectId}</code>
        </dd>
        <dt>Organization</dt>
        <dd>
          <OrgLink orgId={p.details?.resourceOwner?.id ?? ""} readable={may("org.read")} />
        </dd>
      </dl>
      <div className="actions">
        {may("project.write") && (
          <StateToggle
            active={active}
            pending={deactivate.isPending || reactivate.isPending}
            onChange={(on) => (on ? reactivate : deactivate).mutate({ id: projectId })}
          />
        )}
        {may("project.delete") && (
          <ConfirmAction
            trigger="Delete…"
            title={`Delete ${name}?`}
            confirm="Delete the project"
            onConfirm={async () => {
              await remove.mutateAsync({ id: projectId });
              // Away first: refreshed here, the page would fetch the project it just deleted.
              await navigate({ to: "/projects", search: (prev) => prev });
              await refresh();
            }}
          >
            <p>
              Its roles, its applications, its grants to other organizations and every user grant on it go with it. Applications of the project stop working at
              once.
            </p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={deactivate.error ?? reactivate.error} />
      <Settings projectId={projectId} project={p} mayWrite={may("project.write")} onSaved={refresh} />
      <Roles projectId={projectId} mayWrite={may("project.write")} />
      {may("project.app.read") && <Apps projectId={projectId} mayWrite={may("project.app.write")} />}
      {may("project.grant.read") && <ProjectGrants projectId={projectId} projectOrgId={p.details?.resourceOwner?.id ?? ""} />}
      {may("user.grant.read") && <UserGrants projectId={projectId} />}
    </>
  );
}

/** The organization holding the project, by name where the person may read it. */
function OrgLink({ orgId, readable }: { orgId: string; readable: boolean }) {
  const org = useQuery(PlatformOrganizations.method.getOrganization, { id: orgId }, { enabled: readable && Boolean(orgId) });
  if (!readable) return <code>{orgId}</code>;
  return (
    <Link to="/organizations/$orgId" params={{ orgId }} search={(prev) => prev}>
      {org.data?.organization?.name ?? orgId}
    </Link>
  );
}

interface SettingsValues {
  name: string;
  roleAssertion: boolean;
  roleCheck: boolean;
}

function Settings({ projectId, project, mayWrite, onSaved }: { projectId: string; project: GetProject; mayWrite: boolean; onSaved(): Promise<void> }) {
  const form = useForm<SettingsValues>({
    values: {
      name: project.project?.name ?? "",
      roleAssertion: project.project?.projectRoleAssertion ?? false,
      roleCheck: project.project?.projectRoleCheck ?? false,
    },
  });
  const patch = useMutation(PlatformProjects.method.patchProject, { onSuccess: onSaved });
  const save = (v: SettingsValues) =>
    patch.mutate({ id: projectId, project: { name: v.name.trim(), projectRoleAssertion: v.roleAssertion, projectRoleCheck: v.roleCheck } });
  return (
    <SettingsForm
      mayWrite={mayWrite}
      onSubmit={form.handleSubmit(save)}
      pending={patch.isPending}
      error={patch.error}
      saved={patch.isSuccess && !form.formState.isDirty}
    >
      <TextInput
        control={form.control}
        name="name"
        label="Name"
        rules={{ required: "Give the project a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
      />
      <CheckboxInput control={form.control} name="roleAssertion" label="Tokens carry the user's roles of this project when asked for" />
      <CheckboxInput control={form.control} name="roleCheck" label="Only users with a grant on this project may sign in to its applications" />
    </SettingsForm>
  );
}
