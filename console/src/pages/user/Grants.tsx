import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import { useMemo } from "react";
import { useForm } from "react-hook-form";
import type { GetUserGrant } from "../../../../gen/platform/resources/grant/v3alpha/grant_pb";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { ProjectFieldName } from "../../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { usePermissions } from "../../api/permissions";
import { CheckboxesInput } from "../../components/ChoiceInputs";
import { FormDialog } from "../../components/FormDialog";
import { SearchChoice, useSearchDialog } from "../../components/SearchChoice";
import { useScope } from "../../scope";
import { GrantTable, useUserGrantPage } from "../grants/GrantTable";
import { useProjectRoleOptions } from "../grants/roles";

/** The roles of projects the user holds (user grants), by project; giving, changing and taking them. */
export function Grants({ userId }: { userId: string }) {
  const { may } = usePermissions();
  const grants = useUserGrantPage({ case: "userId", value: { userId } });
  const readProjects = may("project.read");
  const names = useProjectNames(
    grants.rows.map((g) => g.projectId),
    readProjects,
  );
  const projectOf = (g: GetUserGrant) => names.get(g.projectId) ?? g.projectId;
  const cell = (g: GetUserGrant) =>
    readProjects ? (
      <Link to="/projects/$projectId" params={{ projectId: g.projectId }} search={(prev) => prev}>
        {projectOf(g)}
      </Link>
    ) : (
      projectOf(g)
    );
  return (
    <section aria-labelledby="grants">
      <div className="title">
        <h2 id="grants">Grants</h2>
        {may("user.grant.write") && readProjects && <AddGrant userId={userId} onAdded={grants.refresh} />}
      </div>
      <GrantTable
        grants={grants}
        label="Grants"
        column="Project"
        empty="No roles of any project."
        describe={(g) => `the grant on ${projectOf(g)}`}
        cell={cell}
        dependencies={[names, readProjects]}
      />
    </section>
  );
}

/** The names of the projects on a page, where the person may read projects. */
function useProjectNames(ids: string[], readable: boolean): Map<string, string> {
  const { ctx } = useScope();
  const filters = [{ filter: { case: "inIds" as const, value: { ids } } }];
  const found = useQuery(PlatformProjects.method.searchProjects, { ctx, filters, query: { limit: ids.length } }, { enabled: readable && ids.length > 0 });
  return useMemo(() => new Map((found.data?.result ?? []).map((p) => [p.details?.id ?? "", p.project?.name ?? ""])), [found.data]);
}

interface AddValues {
  projectId: string;
  roles: string[];
}

/** A project found by name on the server, chosen among the matches, and which of its roles the user gets. */
function AddGrant({ userId, onAdded }: { userId: string; onAdded(): Promise<void> }) {
  const { ctx } = useScope();
  const dialog = useSearchDialog();
  const form = useForm<AddValues>({ defaultValues: { projectId: "", roles: [] } });
  const text = dialog.text.trim();
  const filters = [{ filter: { case: "name" as const, value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }];
  const found = useQuery(
    PlatformProjects.method.searchProjects,
    { ctx, filters, query: { limit: 10, asc: true }, sortingColumn: ProjectFieldName.NAME },
    { enabled: dialog.open && text !== "" },
  );
  const projectId = form.watch("projectId");
  const roles = useProjectRoleOptions(projectId || undefined);
  const add = useMutation(PlatformGrants.method.createUserGrant, {
    onSuccess: async () => {
      await onAdded();
      dialog.done();
      form.reset();
    },
  });
  const missing = projectId ? undefined : "Choose one of the projects found.";
  const submit = form.handleSubmit((v) => {
    dialog.setTried(true);
    if (missing === undefined) add.mutate({ projectId: v.projectId, ctx, grant: { userId, roleKeys: v.roles } });
  });
  return (
    <FormDialog
      label="Add a grant"
      open={dialog.open}
      onOpenChange={dialog.onOpenChange}
      onSubmit={submit}
      submit="Grant"
      pending={add.isPending}
      error={dialog.tried && missing ? new Error(missing) : (roles.error ?? add.error)}
    >
      <SearchChoice
        control={form.control}
        name="projectId"
        search="Find a project by name"
        label="Project"
        text={dialog.text}
        onText={dialog.setText}
        matches={(found.data?.result ?? []).map((p) => ({ value: p.details?.id ?? "", label: p.project?.name ?? "" }))}
        answered={Boolean(found.data)}
        none="No project matches."
        error={found.error}
        // The roles ticked were another project's.
        onChoose={() => form.setValue("roles", [])}
      />
      {projectId &&
        (roles.options.length > 0 ? (
          <CheckboxesInput control={form.control} name="roles" label="Roles" options={roles.options} />
        ) : (
          <p>The project has no roles yet: the grant gives it without any.</p>
        ))}
    </FormDialog>
  );
}
