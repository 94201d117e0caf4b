import type { MessageInitShape } from "@bufbuild/protobuf";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { Cell } from "react-aria-components";
import type { GetUserGrant, UserGrantSearchFilterSchema } from "../../../../gen/platform/resources/grant/v3alpha/grant_pb";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { usePermissions } from "../../api/permissions";
import { ApiError } from "../../components/ApiError";
import { ChangeRolesDialog } from "../../components/ChangeRolesDialog";
import { Pager } from "../../components/Pager";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { useScope } from "../../scope";
import { useProjectRoleOptions } from "./roles";

const LIMIT = 20;

type Filter = MessageInitShape<typeof UserGrantSearchFilterSchema>["filter"];

/** One page of the user grants that match a filter (a project's, a user's), and refetching every grant answer after a change. */
export function useUserGrantPage(filter: Filter) {
  const { ctx } = useScope();
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformGrants.method.searchUserGrants, { ctx, filters: [{ filter }], query: { offset: BigInt(offset), limit: LIMIT, asc: true } });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformGrants, cardinality: undefined }) });
  return { found, rows: found.data?.result ?? [], offset, setOffset, refresh };
}

export type UserGrantPage = ReturnType<typeof useUserGrantPage>;

/**
 * A page of user grants as a table: whom or what each is of (the first column, marked when a
 * granted organization made it under its project grant), its roles, changing them and
 * removing the grant, for whoever may.
 */
export function GrantTable(props: {
  grants: UserGrantPage;
  label: string;
  column: string;
  empty: string;
  /** The grant in words, such as “the grant of ada@example.com”. */ describe(g: GetUserGrant): string;
  cell(g: GetUserGrant): ReactNode;
  dependencies: unknown[];
}) {
  const { grants, label, column, empty, describe, cell, dependencies } = props;
  const { ctx } = useScope();
  const { may } = usePermissions();
  const remove = useMutation(PlatformGrants.method.deleteUserGrant, { onSuccess: grants.refresh });
  // The roles to choose from are the project's: reading them needs project.read.
  const mayChange = may("user.grant.write") && may("project.read");
  const mayRemove = may("user.grant.delete");
  const { found, rows } = grants;
  return (
    <>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label={label}
        columns={[column, "Roles", "Actions"]}
        rows={rows}
        rowId={(g) => g.details?.id ?? ""}
        pending={found.isPending}
        empty={empty}
        dependencies={[...dependencies, mayChange, mayRemove, remove.isPending]}
      >
        {(g) => (
          <>
            <Cell>
              {cell(g)}
              {g.projectGrantId && <span className="badge">Project grant</span>}
            </Cell>
            <Cell>{g.grant?.roleKeys.join(", ")}</Cell>
            <Cell>
              <div className="row-actions">
                {mayChange && <ChangeGrantRoles grant={g} what={describe(g)} onChanged={grants.refresh} />}
                {mayRemove && <RemoveButton what={describe(g)} pending={remove.isPending} onPress={() => remove.mutate({ id: g.details?.id ?? "", ctx })} />}
              </div>
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={grants.offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={grants.setOffset} />
    </>
  );
}

/** Replaces the roles of one grant with others of its project. */
function ChangeGrantRoles({ grant, what, onChanged }: { grant: GetUserGrant; what: string; onChanged(): Promise<void> }) {
  const { ctx } = useScope();
  const [open, setOpen] = useState(false);
  const roles = useProjectRoleOptions(open ? grant.projectId : undefined);
  const patch = useMutation(PlatformGrants.method.patchUserGrant);
  return (
    <ChangeRolesDialog
      title={`Roles of ${what}`}
      current={grant.grant?.roleKeys ?? []}
      options={roles.options}
      error={roles.error}
      onOpenChange={setOpen}
      onSave={async (roleKeys) => {
        await patch.mutateAsync({ id: grant.details?.id ?? "", ctx, grant: { roleKeys } });
        await onChanged();
      }}
    />
  );
}
