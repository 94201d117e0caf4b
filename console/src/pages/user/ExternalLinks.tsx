import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

const LIMIT = 20;

/** The person's accounts at identity providers, linked by signing in with them; removing a link stops that account finding the person. */
export function ExternalLinks({ userId, mayWrite }: { userId: string; mayWrite: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformUsers.method.listIDPLinks, { id: userId, ctx, query: { offset: BigInt(offset), limit: LIMIT } });
  const remove = useMutation(PlatformUsers.method.deleteIDPLink, { onSuccess: refresh });
  const rows = found.data?.result ?? [];
  return (
    <section aria-labelledby="links">
      <h2 id="links">External accounts</h2>
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label="External accounts"
        columns={["Identity provider", "Account", "Account ID", "Linked", "Actions"]}
        rows={rows}
        rowId={(l) => `${l.idpId} ${l.externalUserId}`}
        pending={found.isPending}
        empty="No linked accounts."
        dependencies={[mayWrite, remove.isPending]}
      >
        {(l) => (
          <>
            <Cell>{l.idpName}</Cell>
            <Cell>{l.externalUserName}</Cell>
            <Cell>
              <code>{l.externalUserId}</code>
            </Cell>
            <Cell>{l.details?.changeDate ? timestampDate(l.details.changeDate).toLocaleDateString() : ""}</Cell>
            <Cell>
              {mayWrite && (
                <RemoveButton
                  what={`the link to ${l.externalUserName} at ${l.idpName}`}
                  pending={remove.isPending}
                  onPress={() => remove.mutate({ id: userId, ctx, idpId: l.idpId, externalUserId: l.externalUserId })}
                />
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </section>
  );
}
