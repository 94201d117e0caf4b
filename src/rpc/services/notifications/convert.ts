import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  NotificationChannel,
  NotificationKind,
  NotificationStatus,
  type NotificationSchema,
  type NotificationSearchFilter,
} from "../../../../gen/platform/resources/notification/v3alpha/notification_pb.js";
import type { NotificationFilter, NotificationStatus as Status } from "../../../domain/notification/queries.js";
import type { MessageKind } from "../../../domain/notification/kinds.js";
import type { NotificationRow } from "../../../store/schema.js";

const KIND: Record<MessageKind, NotificationKind> = {
  verify_email: NotificationKind.VERIFY_EMAIL,
  verify_phone: NotificationKind.VERIFY_PHONE,
  password_reset: NotificationKind.PASSWORD_RESET,
  password_reset_sms: NotificationKind.PASSWORD_RESET_SMS,
  invite: NotificationKind.INVITE,
  password_changed: NotificationKind.PASSWORD_CHANGED,
  otp_email: NotificationKind.OTP_EMAIL,
  otp_sms: NotificationKind.OTP_SMS,
};
const CHANNEL: Record<"email" | "sms", NotificationChannel> = { email: NotificationChannel.EMAIL, sms: NotificationChannel.SMS };
const STATUS: Record<Status, NotificationStatus> = { pending: NotificationStatus.PENDING, sent: NotificationStatus.SENT, failed: NotificationStatus.FAILED };

/** The reverse of a total mapping (validation lets only defined, non-zero values through). */
const reverse = <K extends string, V>(map: Record<K, V>) => new Map((Object.entries(map) as [K, V][]).map(([k, v]) => [v, k]));
const KIND_FROM = reverse(KIND);
const CHANNEL_FROM = reverse(CHANNEL);
const STATUS_FROM = reverse(STATUS);

export function notificationToProto(row: NotificationRow): MessageInitShape<typeof NotificationSchema> {
  return {
    id: row.id,
    userId: row.user_id,
    orgId: row.org_id,
    kind: KIND[row.kind as MessageKind] ?? NotificationKind.UNSPECIFIED,
    channel: CHANNEL[row.channel],
    recipient: row.recipient,
    language: row.language ?? "",
    status: STATUS[row.status],
    attempts: Number(row.attempts),
    ...(row.status === "pending" && { nextAttemptDate: timestampFromDate(new Date(row.next_attempt_at)) }),
    lastError: row.last_error ?? "",
    creationDate: timestampFromDate(new Date(row.created_at)),
    ...(row.sent_at && { sentDate: timestampFromDate(new Date(row.sent_at)) }),
    expirationDate: timestampFromDate(new Date(row.expires_at)),
  };
}

export function notificationFilterFromProto(f: NotificationSearchFilter): NotificationFilter {
  const filter = f.filter;
  switch (filter.case) {
    case "user":
      return { userId: filter.value.userId };
    case "kind":
      return { kind: KIND_FROM.get(filter.value.kind)! };
    case "channel":
      return { channel: CHANNEL_FROM.get(filter.value.channel)! };
    case "status":
      return { status: STATUS_FROM.get(filter.value.status)! };
    case "creationDate":
      return {
        ...(filter.value.since && { since: timestampDate(filter.value.since) }),
        ...(filter.value.until && { until: timestampDate(filter.value.until) }),
      };
  }
  throw new Error("validation lets no empty filter through");
}
