import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventSchema, type Event, type EventFilter as EventFilterProto } from "../../../../gen/platform/resources/event/v3alpha/event_pb.js";
import { formatPosition } from "../../../domain/audit/positions.js";
import type { EventFilter, LogEvent } from "../../../domain/audit/queries.js";
import type { JsonObject } from "@bufbuild/protobuf";

export function eventFilterFromProto(f: EventFilterProto): EventFilter {
  const { filter } = f;
  switch (filter.case) {
    case "resource":
      return { resource: { type: filter.value.type, id: filter.value.id } };
    case "resourceTypes":
      return { resourceTypes: filter.value.types };
    case "editor":
      return { editor: filter.value.userId };
    case "types":
      return { types: filter.value.types, groups: filter.value.groups };
    case "organization":
      return { orgId: filter.value.orgId };
    case "timeRange":
      return {
        ...(filter.value.since && { since: timestampDate(filter.value.since) }),
        ...(filter.value.until && { until: timestampDate(filter.value.until) }),
      };
    default:
      // Validation requires one (the oneof is required).
      throw new Error("an event filter without a condition");
  }
}

export function eventToProto(e: LogEvent): Event {
  return create(EventSchema, {
    position: formatPosition(e.at),
    type: e.type,
    resource: { type: e.resourceType, id: e.resourceId },
    sequence: BigInt(e.sequence),
    organizationId: e.orgId,
    instanceId: e.instanceId,
    creationDate: timestampFromDate(e.createdAt),
    editor: {
      userId: e.editor.userId,
      displayName: e.editor.displayName ?? "",
      client: e.editor.client ?? "",
      ipAddress: e.editor.ip ?? "",
      userAgent: e.editor.userAgent ?? "",
    },
    payload: e.payload as JsonObject,
  });
}
