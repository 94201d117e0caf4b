import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Button, Cell } from "react-aria-components";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { DeliveryStatus } from "../../../gen/platform/resources/action/v3alpha/delivery_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { useStatusFilter } from "../components/StatusFilter";
import { ActionsTabs } from "./actions/ActionsTabs";

const LIMIT = 20;
const STATUSES = [
  { key: "any", label: "Any status" },
  { key: "failed", label: "Failed" },
  { key: "pending", label: "Pending" },
  { key: "delivered", label: "Delivered" },
] as const;
const STATUS_OF = { failed: DeliveryStatus.FAILED, pending: DeliveryStatus.PENDING, delivered: DeliveryStatus.DELIVERED } as const;
const STATUS_LABEL: Record<DeliveryStatus, string> = {
  [DeliveryStatus.UNSPECIFIED]: "—",
  [DeliveryStatus.PENDING]: "Pending",
  [DeliveryStatus.DELIVERED]: "Delivered",
  [DeliveryStatus.FAILED]: "Failed",
};

/** What event executions delivered to their targets, newest first; sending a failed or delivered one again. */
export function Deliveries() {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const { filters, offset, setOffset, control } = useStatusFilter(STATUSES, STATUS_OF);
  // While any shown is pending, the page looks again every few seconds: the log is watched as it happens.
  const found = useQuery(
    PlatformActions.method.searchDeliveries,
    { filters, query: { offset: BigInt(offset), limit: LIMIT } },
    { refetchInterval: (q) => (q.state.data?.result.some((r) => r.status === DeliveryStatus.PENDING) ? 2000 : false) },
  );
  const retry = useMutation(PlatformActions.method.retryDelivery, {
    onSuccess: () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformActions, cardinality: undefined }) }),
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Actions</h1>
      </div>
      <ActionsTabs />
      {control}
      <ApiError error={found.error ?? retry.error} />
      <ResultTable
        label="Deliveries"
        columns={["Event", "Status", "Attempts", "Last error", "Created", "Actions"]}
        rows={rows}
        rowId={(d) => d.id}
        pending={found.isPending}
        empty="No deliveries."
      >
        {(d) => (
          <>
            <Cell>
              <code>{d.eventType}</code>
            </Cell>
            <Cell>{STATUS_LABEL[d.status]}</Cell>
            <Cell>{d.attempts}</Cell>
            <Cell>{d.lastError || (d.status === DeliveryStatus.FAILED && d.lastHttpStatus ? `HTTP ${d.lastHttpStatus}` : "")}</Cell>
            <Cell>{d.creationDate ? timestampDate(d.creationDate).toLocaleString() : ""}</Cell>
            <Cell>
              {may("action.execution.write") && d.status !== DeliveryStatus.PENDING && (
                <Button aria-label={`Send again: ${d.eventType}`} onPress={() => retry.mutate({ id: d.id })} isDisabled={retry.isPending}>
                  Send again
                </Button>
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}
