import type { Db } from "../../../store/db.js";
import { type Condition, conditionId, type ConditionType } from "./condition.js";
import { searchPage, type Page } from "../../../store/search.js";
import { AGGREGATE, executionView } from "./model.js";

export type ExecutionFilter = { conditions: Condition[] } | { type: ConditionType } | { target: string } | { include: string };

/** Filters are combined with AND; sorted by creation date, ties by id. */
export async function searchExecutions(db: Db, instanceId: string, filters: ExecutionFilter[], page: Page) {
  let query = db.selectFrom("executions").where("instance_id", "=", instanceId);
  for (const f of filters) {
    // One array parameter however long the list: pg allows at most 65535 parameters.
    if ("conditions" in f) query = query.where((eb) => eb("id", "=", eb.fn.any(eb.val(f.conditions.map(conditionId)))));
    else if ("type" in f) query = query.where("condition_type", "=", f.type);
    else if ("target" in f) query = query.where("targets", "@>", JSON.stringify([f.target]) as never);
    else query = query.where("includes", "@>", JSON.stringify([f.include]) as never);
  }
  const found = await searchPage(db, AGGREGATE, instanceId, query, (q, direction) => q.orderBy("created_at", direction).orderBy("id", direction), page);
  return { ...found, rows: found.rows.map(executionView) };
}
