import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { ProjectRoleFieldName } from "../../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { TextInput } from "../../components/TextInput";

const LIMIT = 20;

interface RoleValues {
  key: string;
  displayName: string;
  group: string;
}

/** The roles of a project, which user grants give: a page at a time, adding and removing them. */
export function Roles({ projectId, mayWrite }: { projectId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformProjects.method.searchProjectRoles, {
    projectId,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: ProjectRoleFieldName.KEY,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformProjects, cardinality: undefined }) });
  const add = useMutation(PlatformProjects.method.addProjectRole, { onSuccess: refresh });
  // A role removed leaves the project grants and user grants that gave it: their answers too.
  const remove = useMutation(PlatformProjects.method.removeProjectRole, {
    onSuccess: () =>
      Promise.all([refresh(), queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformGrants, cardinality: undefined }) })]),
  });
  const form = useForm<RoleValues>({ defaultValues: { key: "", displayName: "", group: "" } });
  const rows = found.data?.result ?? [];
  const submit = (v: RoleValues) =>
    add.mutate({ projectId, role: { key: v.key.trim(), displayName: v.displayName.trim(), group: v.group.trim() } }, { onSuccess: () => form.reset() });
  return (
    <section aria-labelledby="roles">
      <h2 id="roles">Roles</h2>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label="Roles"
        columns={["Key", "Display name", "Group", "Actions"]}
        rows={rows}
        rowId={(r) => r.role?.key ?? ""}
        pending={found.isPending}
        empty="No roles yet."
      >
        {(r) => (
          <>
            <Cell>
              <code>{r.role?.key}</code>
            </Cell>
            <Cell>{r.role?.displayName}</Cell>
            <Cell>{r.role?.group}</Cell>
            <Cell>
              {mayWrite && (
                <RemoveButton
                  what={`the role ${r.role?.key ?? ""}`}
                  pending={remove.isPending}
                  onPress={() => remove.mutate({ projectId, key: r.role?.key ?? "" })}
                />
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
      {mayWrite && (
        <form className="inline" aria-label="Add a role" onSubmit={form.handleSubmit(submit)}>
          <h3>Add a role</h3>
          <div className="field-row">
            <TextInput
              control={form.control}
              name="key"
              label="Key"
              description="What tokens carry, e.g. reader; no spaces."
              rules={{ required: "Give the role a key.", pattern: { value: /^\S+$/, message: "No spaces." } }}
            />
            <TextInput control={form.control} name="displayName" label="Display name" rules={{ required: "Give the role a name people read." }} />
            <TextInput control={form.control} name="group" label="Group" description="Optional: a label to group roles by." />
          </div>
          <Button type="submit" isDisabled={add.isPending}>
            Add role
          </Button>
          <ApiError error={add.error} />
        </form>
      )}
    </section>
  );
}
