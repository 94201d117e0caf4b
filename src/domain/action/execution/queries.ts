import type { Db } from "../../../store/eventstore.js";
import { projectionState } from "../../../store/eventstore.js";
import type { ConditionType } from "../../../store/schema.js";
import { withTotal, type Page } from "../../../store/search.js";
import { conditionId, type Condition } from "./condition.js";
import { AGGREGATE, executionView } from "./model.js";

export type ExecutionFilter =
  | { conditions: Condition[] }
  | { type: ConditionType }
  | { target: string }
  | { include: string };

/** Filters are combined with AND; sorted by creation date, ties by id. */
export async function searchExecutions(db: Db, instanceId: string, filters: ExecutionFilter[], page: Page) {
  const direction = page.asc ? "asc" : "desc";
  let query = db.selectFrom("executions").where("instance_id", "=", instanceId);
  for (const f of filters) {
    // One array parameter however long the list: pg allows at most 65535 parameters.
    if ("conditions" in f) query = query.where((eb) => eb("id", "=", eb.fn.any(eb.val(f.conditions.map(conditionId)))));
    else if ("type" in f) query = query.where("condition_type", "=", f.type);
    else if ("target" in f) query = query.where("targets", "@>", JSON.stringify([f.target]) as never);
    else query = query.where("includes", "@>", JSON.stringify([f.include]) as never);
  }
  const [rows, state] = await Promise.all([
    query
      .selectAll()
      .select((eb) => eb.fn.countAll<number>().over().as("total"))
      .orderBy("created_at", direction)
      .orderBy("id", direction)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    projectionState(db, instanceId, AGGREGATE),
  ]);
  const found = await withTotal(
    rows,
    async () => Number((await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n),
    page.offset,
  );
  return { ...found, rows: found.rows.map(executionView), state };
}
