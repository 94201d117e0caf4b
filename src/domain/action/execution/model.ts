import type { ExecutionRow } from "../../../store/schema.js";
import { instanceOwnedDetails, type ObjectDetails } from "../../details.js";
import { parseConditionId, type Condition } from "./condition.js";

export const AGGREGATE = "execution";
/** The id limit of the API (DeleteExecution takes ids of 1 to 200 characters). */
export const MAX_ID_LENGTH = 200;
/** How deep includes may nest below an execution. */
export const MAX_INCLUDE_DEPTH = 3;

export interface ExecutionView {
  details: ObjectDetails;
  condition: Condition;
  targets: string[];
  includes: string[];
}

export function executionView(row: ExecutionRow): ExecutionView {
  return {
    details: instanceOwnedDetails(row),
    condition: parseConditionId(row.id),
    targets: row.targets,
    includes: row.includes,
  };
}
