import type { TargetRow } from "../../../store/schema.js";
import { instanceOwnedDetails, type ObjectDetails } from "../../details.js";

export type TargetKind = TargetRow["target_type"];
export type ExecutionMode = TargetRow["execution_mode"];

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

/** What a view reads of a target's row: reads select only these (not its sealed signing keys). */
export const TARGET_VIEW_COLUMNS = ["id", "instance_id", "sequence", "change_date", "name", "target_type", "url", "timeout_ms", "execution_mode"] as const;
export type TargetViewRow = Pick<TargetRow, (typeof TARGET_VIEW_COLUMNS)[number]>;

export function targetView(row: TargetViewRow): TargetView {
  return {
    details: instanceOwnedDetails(row),
    name: row.name,
    kind: row.target_type,
    url: row.url,
    timeoutMs: row.timeout_ms,
    mode: row.execution_mode,
  };
}
