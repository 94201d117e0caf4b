import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Cell } from "react-aria-components";
import { SessionFieldName, type Factors } from "../../../../gen/platform/resources/session/v3alpha/session_pb";
import { PlatformSessions } from "../../../../gen/platform/resources/session/v3alpha/session_service_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";

const LIMIT = 20;

const FACTORS: [keyof Omit<Factors, "user" | "$typeName" | "$unknown">, string][] = [
  ["password", "Password"],
  ["totp", "Authenticator app"],
  ["otpEmail", "Code by email"],
  ["otpSms", "Code by text message"],
  ["recoveryCode", "Recovery code"],
  ["webAuthN", "Passkey"],
  ["idpIntent", "Identity provider"],
];

const when = (t: Timestamp | undefined) => (t ? timestampDate(t).toLocaleString() : "");

/**
 * The user's sessions, newest first: when each began and last changed, the browser it is
 * for, which factors it checked; ending one. Sessions belong to the instance, which is why
 * no organization's context goes with these requests (the API refuses one).
 */
export function Sessions({ userId, mayDelete }: { userId: string; mayDelete: boolean }) {
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const filters = [{ filter: { case: "userId" as const, value: userId } }];
  const found = useQuery(PlatformSessions.method.searchSessions, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT },
    sortingColumn: SessionFieldName.CREATION_DATE,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformSessions, cardinality: undefined }) });
  const end = useMutation(PlatformSessions.method.deleteSession, { onSuccess: refresh });
  const rows = found.data?.result ?? [];
  return (
    <section aria-labelledby="sessions">
      <h2 id="sessions">Sessions</h2>
      <ApiError error={found.error ?? end.error} />
      <ResultTable
        label="Sessions"
        columns={["Started", "Last change", "Browser", "Checked", "Expires", "Actions"]}
        rows={rows}
        rowId={(s) => s.details?.id ?? ""}
        pending={found.isPending}
        empty="No sessions."
        dependencies={[mayDelete, end.isPending]}
      >
        {(s) => {
          const factors = s.factors;
          const checked = FACTORS.filter(([field]) => factors?.[field]?.verifiedAt).map(([, label]) => label);
          return (
            <>
              <Cell>{when(s.creationDate)}</Cell>
              <Cell>{when(s.details?.changeDate)}</Cell>
              <Cell>
                {s.userAgent?.description}
                {s.userAgent?.ip && <span className="badge">{s.userAgent.ip}</span>}
              </Cell>
              <Cell>{checked.length > 0 ? checked.join(", ") : "The user only"}</Cell>
              <Cell>{s.expirationDate ? when(s.expirationDate) : "When ended"}</Cell>
              <Cell>
                {mayDelete && (
                  <Button
                    aria-label={`End the session ${s.details?.id ?? ""}`}
                    onPress={() => end.mutate({ id: s.details?.id ?? "" })}
                    isDisabled={end.isPending}
                  >
                    End
                  </Button>
                )}
              </Cell>
            </>
          );
        }}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </section>
  );
}
