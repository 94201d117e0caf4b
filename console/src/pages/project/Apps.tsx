import { useQuery } from "@connectrpc/connect-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { AppFieldName, AppState } from "../../../../gen/platform/resources/app/v3alpha/app_pb";
import { PlatformApps } from "../../../../gen/platform/resources/app/v3alpha/app_service_pb";
import { ApiError } from "../../components/ApiError";
import { Pager } from "../../components/Pager";
import { ResultTable } from "../../components/ResultTable";
import { NewApp } from "./NewApp";

const LIMIT = 20;

/** The applications of a project, a page at a time, each leading to its page; creating one. */
export function Apps({ projectId, mayWrite }: { projectId: string; mayWrite: boolean }) {
  const [offset, setOffset] = useState(0);
  const filters = [{ filter: { case: "projectId" as const, value: { projectId } } }];
  const found = useQuery(PlatformApps.method.searchApps, {
    filters,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: AppFieldName.NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <section aria-labelledby="apps">
      <div className="title">
        <h2 id="apps">Applications</h2>
        {mayWrite && <NewApp projectId={projectId} />}
      </div>
      <ApiError error={found.error} />
      <ResultTable
        label="Applications"
        columns={["Name", "Kind", "Client ID", "State"]}
        rows={rows}
        rowId={(a) => a.details?.id ?? ""}
        pending={found.isPending}
        empty="No applications yet."
      >
        {(a) => (
          <>
            <Cell>
              <Link to="/projects/$projectId/apps/$appId" params={{ projectId, appId: a.details?.id ?? "" }} search={(prev) => prev}>
                {a.app?.name}
              </Link>
            </Cell>
            <Cell>{a.app?.config.case === "api" ? "API" : "OpenID Connect"}</Cell>
            <Cell>
              <code>{a.clientId}</code>
            </Cell>
            <Cell>{a.state === AppState.ACTIVE ? "Active" : "Inactive"}</Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </section>
  );
}
