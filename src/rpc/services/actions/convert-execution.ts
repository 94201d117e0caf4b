import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  ExecutionType,
  type ConditionSchema,
  type Condition as ConditionProto,
  type ExecutionSearchFilter,
} from "../../../../gen/platform/resources/action/v3alpha/execution_pb.js";
import type { Condition, ConditionType } from "../../../domain/action/execution/condition.js";
import type { ExecutionFilter } from "../../../domain/action/execution/queries.js";

const INVALID = "validation lets no empty condition through";

export function conditionFromProto(c: ConditionProto): Condition {
  const t = c.conditionType;
  switch (t.case) {
    case "request":
    case "response": {
      const inner = t.value.condition;
      if (inner.case === "method") return { type: t.case, method: inner.value };
      if (inner.case === "service") return { type: t.case, service: inner.value };
      if (inner.case === "all") return { type: t.case, all: true };
      break;
    }
    case "function":
      return { type: "function", name: t.value };
    case "event": {
      const inner = t.value.condition;
      if (inner.case === "event") return { type: "event", event: inner.value };
      if (inner.case === "group") return { type: "event", group: inner.value };
      if (inner.case === "all") return { type: "event", all: true };
      break;
    }
  }
  throw new Error(INVALID);
}

export function conditionToProto(c: Condition): MessageInitShape<typeof ConditionSchema> {
  if (c.type === "function") return { conditionType: { case: "function", value: c.name } };
  const inner =
    "method" in c
      ? { case: "method" as const, value: c.method }
      : "service" in c
        ? { case: "service" as const, value: c.service }
        : "event" in c
          ? { case: "event" as const, value: c.event }
          : "group" in c
            ? { case: "group" as const, value: c.group }
            : { case: "all" as const, value: true };
  return { conditionType: { case: c.type, value: { condition: inner } } } as MessageInitShape<typeof ConditionSchema>;
}

const TYPES: Partial<Record<ExecutionType, ConditionType>> = {
  [ExecutionType.REQUEST]: "request",
  [ExecutionType.RESPONSE]: "response",
  [ExecutionType.EVENT]: "event",
  [ExecutionType.FUNCTION]: "function",
};

export function executionFilterFromProto(f: ExecutionSearchFilter): ExecutionFilter {
  switch (f.filter.case) {
    case "inConditions":
      return { conditions: f.filter.value.conditions.map(conditionFromProto) };
    case "executionType":
      return { type: TYPES[f.filter.value.type]! };
    case "target":
      return { target: f.filter.value.id };
    case "include":
      return { include: f.filter.value.include };
    default:
      throw new Error(INVALID);
  }
}
