import { callUnaryMethod, createConnectQueryKey, useMutation, useQuery, useTransport } from "@connectrpc/connect-query";
import type { Transport } from "@connectrpc/connect";
import { useMutation as useTanstackMutation, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Button, Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { ProjectRoleFieldName } from "../../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { CheckboxesInput } from "../../components/ChoiceInputs";
import { Pager } from "../../components/Pager";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { TextInput } from "../../components/TextInput";

const LIMIT = 20;

/** Who holds roles of a project (user grants): a page at a time, by login name where the person may read users; giving and taking them. */
export function UserGrants({ projectId }: { projectId: string }) {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const filters = [{ filter: { case: "projectId" as const, value: { projectId } } }];
  const found = useQuery(PlatformGrants.method.searchUserGrants, { filters, query: { offset: BigInt(offset), limit: LIMIT, asc: true } });
  const rows = found.data?.result ?? [];
  const names = useLoginNames(rows.map((g) => g.grant?.userId ?? ""), may("user.read"));
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformGrants, cardinality: undefined }) });
  const remove = useMutation(PlatformGrants.method.deleteUserGrant, { onSuccess: refresh });
  return (
    <section aria-labelledby="grants">
      <h2 id="grants">User grants</h2>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable label="User grants" columns={["User", "Roles", "Actions"]} rows={rows} rowId={(g) => g.details?.id ?? ""} pending={found.isPending} empty="Nobody holds roles of this project yet." dependencies={[names]}>
        {(g) => {
          const user = names.get(g.grant?.userId ?? "") ?? g.grant?.userId ?? "";
          return (
            <>
              <Cell>{user}</Cell>
              <Cell>{g.grant?.roleKeys.join(", ")}</Cell>
              <Cell>{may("user.grant.delete") && <RemoveButton what={`the grant of ${user}`} pending={remove.isPending} onPress={() => remove.mutate({ id: g.details?.id ?? "" })} />}</Cell>
            </>
          );
        }}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
      {may("user.grant.write") && <AddGrant projectId={projectId} searchUsers={may("user.read")} onAdded={refresh} />}
    </section>
  );
}

/** The login names of the users on a page, where the person may read users. */
function useLoginNames(ids: string[], readable: boolean): Map<string, string> {
  const filters = [{ filter: { case: "inIds" as const, value: { ids } } }];
  const users = useQuery(PlatformUsers.method.searchUsers, { filters, query: { limit: ids.length } }, { enabled: readable && ids.length > 0 });
  return useMemo(() => new Map((users.data?.result ?? []).map((u) => [u.details?.id ?? "", u.loginName])), [users.data]);
}

interface GrantValues {
  user: string;
  roles: string[];
}

function AddGrant({ projectId, searchUsers, onAdded }: { projectId: string; searchUsers: boolean; onAdded(): Promise<void> }) {
  const transport = useTransport();
  const roles = useQuery(PlatformProjects.method.searchProjectRoles, { projectId, query: { limit: 1000, asc: true }, sortingColumn: ProjectRoleFieldName.KEY });
  const form = useForm<GrantValues>({ defaultValues: { user: "", roles: [] } });
  const add = useTanstackMutation({
    mutationFn: async (v: GrantValues) => {
      const userId = searchUsers ? await userIdOf(transport, v.user.trim()) : v.user.trim();
      return callUnaryMethod(transport, PlatformGrants.method.createUserGrant, { projectId, grant: { userId, roleKeys: v.roles } });
    },
    onSuccess: async () => {
      form.reset();
      await onAdded();
    },
  });
  const options = (roles.data?.result ?? []).map((r) => ({ value: r.role?.key ?? "", label: `${r.role?.displayName ?? ""} (${r.role?.key ?? ""})` }));
  return (
    <form className="inline" aria-label="Grant roles" onSubmit={form.handleSubmit((v) => add.mutate(v))}>
      <h3>Grant roles</h3>
      <TextInput control={form.control} name="user" label="User" description="Login name (name@domain) or ID; any organization's user of this instance." rules={{ required: "Name the user." }} />
      {options.length > 0 && <CheckboxesInput control={form.control} name="roles" label="Roles" options={options} />}
      <ApiError error={roles.error ?? add.error} />
      <Button type="submit" isDisabled={add.isPending}>
        Grant
      </Button>
    </form>
  );
}

/** The user with this login name; else the text is taken as an ID, which the grant's creation checks. */
async function userIdOf(transport: Transport, text: string): Promise<string> {
  const filters = [{ filter: { case: "loginName" as const, value: { value: text, method: TextFilterMethod.EQUALS_IGNORE_CASE } } }];
  const found = await callUnaryMethod(transport, PlatformUsers.method.searchUsers, { filters, query: { limit: 1 } });
  return found.result[0]?.details?.id ?? text;
}
