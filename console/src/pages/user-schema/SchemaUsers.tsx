import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { UserFieldName } from "../../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";
import { useScope } from "../../scope";
import { stateLabel, UserLink } from "../Users";

const LIMIT = 20;

/** The users of one schema in the chosen context (SearchUsers by schema), a page at a time: why a schema cannot be deleted. */
export function SchemaUsers({ schemaId }: { schemaId: string }) {
  const { ctx } = useScope();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformUsers.method.searchUsers, {
    filters: [{ filter: { case: "schema", value: { schemaId } } }],
    ctx,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: UserFieldName.USERNAME,
  });
  const rows = found.data?.result ?? [];
  const total = Number(found.data?.details?.totalResult ?? 0n);
  return (
    <section aria-labelledby="schema-users">
      <h2 id="schema-users">Users of this schema</h2>
      <p role="status">{found.isPending ? "" : total === 1 ? "1 user" : `${total} users`}</p>
      <ApiError error={found.error} />
      <ResultTable
        label="Users of this schema"
        columns={["Name", "Login name", "Revision", "State"]}
        rows={rows}
        rowId={(u) => u.details?.id ?? ""}
        pending={found.isPending}
        empty="No user has this schema."
      >
        {(u) => (
          <>
            <Cell>
              <UserLink user={u} />
            </Cell>
            <Cell>{u.loginName}</Cell>
            <Cell>{u.type.case === "schema" ? u.type.value.revision : ""}</Cell>
            <Cell>{stateLabel(u.state)}</Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={total} onOffset={setOffset} />
    </section>
  );
}
