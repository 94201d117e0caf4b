import type { ExecutionRow } from "../../../store/schema.js";
import type { ObjectDetails } from "../../details.js";
import { parseConditionId, type Condition } from "./condition.js";

export const AGGREGATE = "execution";
/** How deep includes may nest below an execution. */
export const MAX_INCLUDE_DEPTH = 3;

export interface ExecutionView {
  details: ObjectDetails;
  condition: Condition;
  targets: string[];
  includes: string[];
}

export function executionDetails(row: Pick<ExecutionRow, "id" | "instance_id" | "sequence" | "change_date">): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "instance", id: row.instance_id } };
}

export function executionView(row: ExecutionRow): ExecutionView {
  return {
    details: executionDetails(row),
    condition: parseConditionId(row.id),
    targets: row.targets,
    includes: row.includes,
  };
}
