import type { ExecutionMode, TargetKind, TargetRow } from "../../../store/schema.js";
import type { ObjectDetails } from "../../details.js";

export interface TargetSpec {
  name: string;
  kind: TargetKind;
  url: string;
  timeoutMs: number;
  mode: ExecutionMode;
}

export interface TargetPatch {
  name?: string;
  endpoint?: { kind: TargetKind; url: string };
  timeoutMs?: number;
  mode?: ExecutionMode;
  regenerateSigningKey?: boolean;
}

export interface TargetView extends TargetSpec {
  details: ObjectDetails;
}

export const AGGREGATE = "target";
export const DEFAULT_TIMEOUT_MS = 10_000;
export const SIGNING_KEY_LENGTH = 36;

export function targetDetails(row: Pick<TargetRow, "id" | "instance_id" | "sequence" | "change_date">): ObjectDetails {
  return {
    id: row.id,
    sequence: row.sequence,
    changeDate: row.change_date,
    owner: { type: "instance", id: row.instance_id },
  };
}

export function targetView(row: TargetRow): TargetView {
  return {
    details: targetDetails(row),
    name: row.name,
    kind: row.target_type,
    url: row.url,
    timeoutMs: row.timeout_ms,
    mode: row.execution_mode,
  };
}
