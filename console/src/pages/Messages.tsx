import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Button, Cell } from "react-aria-components";
import { NotificationChannel, NotificationKind, NotificationStatus } from "../../../gen/platform/resources/notification/v3alpha/notification_pb";
import { PlatformNotifications } from "../../../gen/platform/resources/notification/v3alpha/notification_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { useStatusFilter } from "../components/StatusFilter";
import { MessagesTabs } from "./messages/MessagesTabs";

const LIMIT = 20;
const STATUSES = [
  { key: "any", label: "Any status" },
  { key: "failed", label: "Failed" },
  { key: "pending", label: "Pending" },
  { key: "sent", label: "Sent" },
] as const;
const STATUS_OF = { failed: NotificationStatus.FAILED, pending: NotificationStatus.PENDING, sent: NotificationStatus.SENT } as const;
const STATUS_LABEL: Record<NotificationStatus, string> = {
  [NotificationStatus.UNSPECIFIED]: "—",
  [NotificationStatus.PENDING]: "Pending",
  [NotificationStatus.SENT]: "Sent",
  [NotificationStatus.FAILED]: "Failed",
};
const KIND_LABEL: Record<NotificationKind, string> = {
  [NotificationKind.UNSPECIFIED]: "—",
  [NotificationKind.VERIFY_EMAIL]: "Email verification",
  [NotificationKind.VERIFY_PHONE]: "Phone verification",
  [NotificationKind.PASSWORD_RESET]: "Password reset",
  [NotificationKind.INVITE]: "Invitation",
  [NotificationKind.PASSWORD_CHANGED]: "Password changed",
  [NotificationKind.PASSWORD_RESET_SMS]: "Password reset by SMS",
  [NotificationKind.OTP_EMAIL]: "Sign-in code by email",
  [NotificationKind.OTP_SMS]: "Sign-in code by SMS",
};

/** The instance's messages (emails and texts), newest first: what went out, what failed and why; sending a failed one again. */
export function Messages() {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const { filters, offset, setOffset, control } = useStatusFilter(STATUSES, STATUS_OF);
  // While any shown is pending, the page looks again every few seconds: the log is watched as it happens.
  const found = useQuery(
    PlatformNotifications.method.searchNotifications,
    { filters, query: { offset: BigInt(offset), limit: LIMIT } },
    { refetchInterval: (q) => (q.state.data?.result.some((r) => r.status === NotificationStatus.PENDING) ? 2000 : false) },
  );
  const retry = useMutation(PlatformNotifications.method.retryNotification, {
    onSuccess: () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformNotifications, cardinality: undefined }) }),
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Messages</h1>
      </div>
      <MessagesTabs />
      {control}
      <ApiError error={found.error ?? retry.error} />
      <ResultTable
        label="Messages"
        columns={["Message", "To", "Status", "Attempts", "Last error", "Created", "Actions"]}
        rows={rows}
        rowId={(n) => n.id}
        pending={found.isPending}
        empty="No messages."
      >
        {(n) => (
          <>
            <Cell>
              {KIND_LABEL[n.kind]} <span className="badge">{n.channel === NotificationChannel.SMS ? "SMS" : "Email"}</span>
            </Cell>
            <Cell>{n.recipient}</Cell>
            <Cell>{STATUS_LABEL[n.status]}</Cell>
            <Cell>{n.attempts}</Cell>
            <Cell>{n.lastError}</Cell>
            <Cell>{n.creationDate ? timestampDate(n.creationDate).toLocaleString() : ""}</Cell>
            <Cell>
              {may("instance.notification.write") && n.status === NotificationStatus.FAILED && (
                <Button
                  aria-label={`Send again: the ${KIND_LABEL[n.kind].toLowerCase()} to ${n.recipient}`}
                  onPress={() => retry.mutate({ id: n.id })}
                  isDisabled={retry.isPending}
                >
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
