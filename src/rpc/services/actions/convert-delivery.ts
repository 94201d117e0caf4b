import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DeliveryStatus, type DeliverySchema, type DeliverySearchFilter } from "../../../../gen/platform/resources/action/v3alpha/delivery_pb.js";
import type { DeliveryFilter, DeliveryStatus as Status } from "../../../domain/action/delivery/queries.js";
import type { ActionDeliveryRow } from "../../../store/schema.js";

const STATUS_TO_PROTO: Record<Status, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
};

const STATUS_FROM_PROTO: Partial<Record<DeliveryStatus, Status>> = {
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.DELIVERED]: "delivered",
  [DeliveryStatus.FAILED]: "failed",
};

export function deliveryToProto(row: ActionDeliveryRow): MessageInitShape<typeof DeliverySchema> {
  return {
    id: row.id,
    eventType: row.event_type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    eventSequence: BigInt(row.event_sequence),
    targetId: row.target_id,
    executionId: row.execution_id,
    status: STATUS_TO_PROTO[row.status],
    attempts: Number(row.attempts),
    ...(row.status === "pending" && { nextAttemptDate: timestampFromDate(new Date(row.next_attempt_at)) }),
    lastError: row.last_error ?? "",
    lastHttpStatus: row.last_status ?? 0,
    creationDate: timestampFromDate(new Date(row.created_at)),
    ...(row.delivered_at && { deliveryDate: timestampFromDate(new Date(row.delivered_at)) }),
  };
}

export function deliveryFilterFromProto(f: DeliverySearchFilter): DeliveryFilter {
  const filter = f.filter;
  switch (filter.case) {
    case "target":
      return { target: filter.value.id };
    case "execution":
      return { execution: filter.value.id };
    case "eventType":
      return { eventType: filter.value.eventType };
    case "status":
      return { status: STATUS_FROM_PROTO[filter.value.status]! };
    case "creationDate":
      return {
        ...(filter.value.since && { since: timestampDate(filter.value.since) }),
        ...(filter.value.until && { until: timestampDate(filter.value.until) }),
      };
  }
  throw new Error("validation lets no empty filter through");
}
