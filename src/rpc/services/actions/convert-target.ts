import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  TargetFieldName,
  type PatchTarget,
  type Target,
  type TargetSchema,
  type TargetSearchFilter,
} from "../../../../gen/platform/resources/action/v3alpha/target_pb.js";
import {
  DEFAULT_TIMEOUT_MS,
  type ExecutionMode,
  type TargetKind,
  type TargetPatch,
  type TargetSpec,
  type TargetView,
} from "../../../domain/action/target/model.js";
import type { TargetFilter, TargetSortColumn } from "../../../domain/action/target/queries.js";
import { durationToMs, msToDuration, textMatchFromProto } from "../convert.js";

type Endpoint = Target["targetType"] | PatchTarget["targetType"];
type Mode = Target["executionType"] | PatchTarget["executionType"];

function endpointFromProto(t: Endpoint): { kind: TargetKind; url: string } | undefined {
  switch (t.case) {
    case "restWebhook":
      return { kind: "rest_webhook", url: t.value.url };
    case "restRequestResponse":
      return { kind: "rest_request_response", url: t.value.url };
    default:
      return undefined;
  }
}

function modeFromProto(m: Mode): ExecutionMode | undefined {
  if (m.case === "isAsync") return m.value ? "async" : "sync";
  if (m.case === "interruptOnError") return m.value ? "interrupt_on_error" : "sync";
  return undefined;
}

/** Validation has made sure target_type is set. */
export function targetSpecFromProto(t: Target): TargetSpec {
  const endpoint = endpointFromProto(t.targetType)!;
  return {
    name: t.name,
    ...endpoint,
    timeoutMs: t.timeout ? durationToMs(t.timeout) : DEFAULT_TIMEOUT_MS,
    mode: modeFromProto(t.executionType) ?? "sync",
  };
}

export function targetPatchFromProto(p: PatchTarget): TargetPatch {
  const endpoint = endpointFromProto(p.targetType);
  const mode = modeFromProto(p.executionType);
  return {
    ...(p.name !== undefined && { name: p.name }),
    ...(endpoint && { endpoint }),
    ...(p.timeout && { timeoutMs: durationToMs(p.timeout) }),
    ...(mode && { mode }),
    regenerateSigningKey: p.regenerateSigningKey,
  };
}

export function targetToProto(v: TargetView): MessageInitShape<typeof TargetSchema> {
  const endpoint = { url: v.url };
  return {
    name: v.name,
    targetType: v.kind === "rest_webhook" ? { case: "restWebhook", value: endpoint } : { case: "restRequestResponse", value: endpoint },
    timeout: msToDuration(v.timeoutMs),
    executionType:
      v.mode === "async" ? { case: "isAsync", value: true } : v.mode === "interrupt_on_error" ? { case: "interruptOnError", value: true } : { case: undefined },
  };
}

export function targetFilterFromProto(f: TargetSearchFilter): TargetFilter {
  switch (f.filter.case) {
    case "name":
      return { name: { value: f.filter.value.name, match: textMatchFromProto(f.filter.value.method) } };
    case "inIds":
      return { ids: f.filter.value.ids };
    default:
      throw new Error("validation lets no empty target filter through");
  }
}

const SORT_COLUMNS: Record<TargetFieldName, TargetSortColumn> = {
  [TargetFieldName.UNSPECIFIED]: "created_at",
  [TargetFieldName.ID]: "id",
  [TargetFieldName.CREATION_DATE]: "created_at",
  [TargetFieldName.CHANGE_DATE]: "change_date",
  [TargetFieldName.NAME]: "name",
  [TargetFieldName.TARGET_TYPE]: "target_type",
  [TargetFieldName.URL]: "url",
  [TargetFieldName.TIMEOUT]: "timeout_ms",
  [TargetFieldName.ASYNC]: "async",
  [TargetFieldName.INTERRUPT_ON_ERROR]: "interrupt_on_error",
};

export function targetSortFromProto(column: TargetFieldName): TargetSortColumn {
  return SORT_COLUMNS[column];
}
