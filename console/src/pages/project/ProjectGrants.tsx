import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useMemo, useState } from "react";
import { Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { ProjectGrantFieldName, ProjectGrantState, type GetProjectGrant } from "../../../../gen/platform/resources/grant/v3alpha/grant_pb";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { OrganizationFieldName } from "../../../../gen/platform/resources/org/v3alpha/organization_pb";
import { PlatformOrganizations } from "../../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { ChangeRolesDialog } from "../../components/ChangeRolesDialog";
import { CheckboxesInput, type Option } from "../../components/ChoiceInputs";
import { ConfirmAction } from "../../components/ConfirmAction";
import { FormDialog } from "../../components/FormDialog";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";
import { SearchChoice, useSearchDialog } from "../../components/SearchChoice";
import { StateToggle } from "../../components/StateToggle";
import { useScope } from "../../scope";
import { useProjectRoleOptions } from "../grants/roles";

const LIMIT = 20;

/**
 * The other organizations of the instance a project gives roles to (project grants), a page
 * at a time, each by name where the person may read organizations: granting the project to
 * one, changing a grant's roles, deactivating, reactivating and removing it.
 */
export function ProjectGrants({ projectId, projectOrgId }: { projectId: string; projectOrgId: string }) {
  const { ctx } = useScope();
  const { may } = usePermissions();
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const filters = [{ filter: { case: "projectId" as const, value: { projectId } } }];
  const found = useQuery(PlatformGrants.method.searchProjectGrants, {
    ctx,
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: ProjectGrantFieldName.CREATION_DATE,
  });
  const rows = found.data?.result ?? [];
  const readOrgs = may("org.read");
  const names = useOrgNames(
    rows.map((g) => g.grantedOrgId),
    readOrgs,
  );
  const roles = useProjectRoleOptions(projectId);
  // Every grant answer: a grant's roles taken away or the grant removed take user grants made under it along.
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformGrants, cardinality: undefined }) });
  const deactivate = useMutation(PlatformGrants.method.deactivateProjectGrant, { onSuccess: refresh });
  const reactivate = useMutation(PlatformGrants.method.reactivateProjectGrant, { onSuccess: refresh });
  const remove = useMutation(PlatformGrants.method.deleteProjectGrant, { onSuccess: refresh });
  const patch = useMutation(PlatformGrants.method.patchProjectGrant);
  const mayWrite = may("project.grant.write");
  const mayDelete = may("project.grant.delete");
  const orgOf = (g: GetProjectGrant) => names.get(g.grantedOrgId) ?? g.grantedOrgId;
  return (
    <section aria-labelledby="project-grants">
      <div className="title">
        <h2 id="project-grants">Project grants</h2>
        {mayWrite && readOrgs && <AddProjectGrant projectId={projectId} projectOrgId={projectOrgId} roles={roles} onAdded={refresh} />}
      </div>
      <ApiError error={found.error ?? deactivate.error ?? reactivate.error} />
      <ResultTable
        label="Project grants"
        columns={["Organization", "Roles", "State", "Actions"]}
        rows={rows}
        rowId={(g) => g.details?.id ?? ""}
        pending={found.isPending}
        empty="The project is granted to no other organization."
        dependencies={[names, roles.options, mayWrite, mayDelete, deactivate.isPending, reactivate.isPending]}
      >
        {(g) => {
          const id = g.details?.id ?? "";
          const org = orgOf(g);
          const active = g.state === ProjectGrantState.ACTIVE;
          return (
            <>
              <Cell>
                {names.has(g.grantedOrgId) ? (
                  <Link to="/organizations/$orgId" params={{ orgId: g.grantedOrgId }} search={(prev) => prev}>
                    {org}
                  </Link>
                ) : (
                  <code>{org}</code>
                )}
              </Cell>
              <Cell>{g.roleKeys.join(", ")}</Cell>
              <Cell>{active ? "Active" : "Inactive"}</Cell>
              <Cell>
                <div className="row-actions">
                  {mayWrite && (
                    <ChangeRolesDialog
                      title={`Roles of the grant to ${org}`}
                      current={g.roleKeys}
                      options={roles.options}
                      error={roles.error}
                      onSave={async (roleKeys) => {
                        await patch.mutateAsync({ id, ctx, grant: { roleKeys } });
                        await refresh();
                      }}
                    />
                  )}
                  {mayWrite && (
                    <StateToggle
                      active={active}
                      pending={deactivate.isPending || reactivate.isPending}
                      onChange={(on) => (on ? reactivate : deactivate).mutate({ id, ctx })}
                    />
                  )}
                  {mayDelete && (
                    <ConfirmAction
                      trigger="Remove…"
                      title={`Remove the grant to ${org}?`}
                      confirm="Remove the grant"
                      onConfirm={() => remove.mutateAsync({ id, ctx })}
                    >
                      <p>
                        {org} loses the roles of this project at once, and with them every user grant its owners made under the grant and every membership in
                        the grant.
                      </p>
                    </ConfirmAction>
                  )}
                </div>
              </Cell>
            </>
          );
        }}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </section>
  );
}

/** The names of the organizations on a page, where the person may read them; those the search does not answer keep their ID. */
function useOrgNames(ids: string[], readable: boolean): Map<string, string> {
  const filters = [{ filter: { case: "inIds" as const, value: { ids } } }];
  const found = useQuery(PlatformOrganizations.method.searchOrganizations, { filters, query: { limit: ids.length } }, { enabled: readable && ids.length > 0 });
  return useMemo(() => new Map((found.data?.result ?? []).map((o) => [o.details?.id ?? "", o.name])), [found.data]);
}

interface AddValues {
  orgId: string;
  roles: string[];
}

/** An organization found by name on the server (any but the project's own), chosen among the matches, and which of the project's roles it gets. */
function AddProjectGrant(props: { projectId: string; projectOrgId: string; roles: { options: Option[]; error: unknown }; onAdded(): Promise<void> }) {
  const { projectId, projectOrgId, roles, onAdded } = props;
  const { ctx } = useScope();
  const dialog = useSearchDialog();
  const form = useForm<AddValues>({ defaultValues: { orgId: "", roles: [] } });
  const text = dialog.text.trim();
  const filters = [{ filter: { case: "name" as const, value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }];
  const found = useQuery(
    PlatformOrganizations.method.searchOrganizations,
    { filters, query: { limit: 10, asc: true }, sortingColumn: OrganizationFieldName.NAME },
    { enabled: dialog.open && text !== "" },
  );
  const add = useMutation(PlatformGrants.method.createProjectGrant, {
    onSuccess: async () => {
      await onAdded();
      dialog.done();
      form.reset();
    },
  });
  const [orgId, roleKeys] = form.watch(["orgId", "roles"]);
  const missing = !orgId ? "Choose one of the organizations found." : roleKeys.length === 0 ? "Choose at least one role." : undefined;
  const submit = form.handleSubmit((v) => {
    dialog.setTried(true);
    if (missing === undefined) add.mutate({ projectId, ctx, grant: { grantedOrgId: v.orgId, roleKeys: v.roles } });
  });
  // A project is granted to other organizations only.
  const matches = (found.data?.result ?? []).filter((o) => o.details?.id !== projectOrgId).map((o) => ({ value: o.details?.id ?? "", label: o.name }));
  return (
    <FormDialog
      label="Grant to an organization"
      open={dialog.open}
      onOpenChange={dialog.onOpenChange}
      onSubmit={submit}
      submit="Grant"
      pending={add.isPending}
      error={dialog.tried && missing ? new Error(missing) : (roles.error ?? add.error)}
    >
      <SearchChoice
        control={form.control}
        name="orgId"
        search="Find an organization by name"
        label="Organization"
        text={dialog.text}
        onText={dialog.setText}
        matches={matches}
        answered={Boolean(found.data)}
        none="No other organization matches."
        error={found.error}
      />
      {roles.options.length > 0 ? (
        <CheckboxesInput control={form.control} name="roles" label="Roles" options={roles.options} />
      ) : (
        <p>The project has no roles yet: add one before granting it.</p>
      )}
    </FormDialog>
  );
}
