import { appendAndProject, appendEvents } from "../../../store/append.js";
import type { Tx } from "../../../store/db.js";
import { lastSequence } from "../../../store/event-reads.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../../details.js";
import { invalidArgument, notFound } from "../../errors.js";
import { type Condition, conditionId, type ConditionType, isConditionId, parseConditionId } from "./condition.js";
import type { ExecutionCatalog } from "./catalog.js";
import { checkIncludeGraph } from "./include-graph.js";
import { AGGREGATE, MAX_ID_LENGTH } from "./model.js";

export interface ExecutionSpec {
  condition: Condition;
  targets: string[];
  includes: string[];
}

/** Creates the execution of a condition, or replaces its targets and includes. */
export async function putExecution(
  tx: Tx,
  actor: Actor,
  spec: ExecutionSpec,
  catalog: ExecutionCatalog,
): Promise<{ details: ObjectDetails; created: boolean }> {
  checkServed(spec.condition, catalog);
  const id = conditionId(spec.condition);
  if (id.length > MAX_ID_LENGTH) {
    throw invalidArgument(`the execution id ${id.slice(0, 40)}… would be longer than ${MAX_ID_LENGTH} characters`);
  }
  const { type } = spec.condition;
  // Targets first, then the graph lock: DeleteTarget takes them in the same order.
  await requireTargets(tx, actor.instanceId, spec.targets);
  await lockIncludeGraph(tx, actor.instanceId, type);

  const siblings = await tx
    .selectFrom("executions")
    .select(["id", "includes"])
    .where("instance_id", "=", actor.instanceId)
    .where("condition_type", "=", type)
    .execute();
  const graph = new Map(siblings.map((s) => [s.id, s.includes]));
  const missing = spec.includes.filter((inc) => inc !== id && !graph.has(inc));
  if (missing.length > 0) {
    throw notFound(`included executions not found among ${type} executions: ${missing.join(", ")}`);
  }
  graph.set(id, spec.includes);
  checkIncludeGraph(graph, id);

  // Locked apart from the graph read: a DeleteTarget may have just changed this row.
  const current = await tx
    .selectFrom("executions")
    .select(["targets", "includes", "sequence", "change_date"])
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (current && sameList(current.targets, spec.targets) && sameList(current.includes, spec.includes)) {
    return { details: instanceOwnedDetails({ id, instance_id: actor.instanceId, ...current }), created: false };
  }
  const aggregate = { instanceId: actor.instanceId, type: AGGREGATE, id };
  const appended = await appendEvents(
    tx,
    aggregate,
    current?.sequence ?? (await lastSequence(tx, aggregate)),
    [{ type: "execution.set", payload: { targets: spec.targets, includes: spec.includes } }],
    actor,
  );
  const values = {
    targets: JSON.stringify(spec.targets),
    includes: JSON.stringify(spec.includes),
    change_date: appended.createdAt,
    sequence: appended.sequence,
  };
  if (current) {
    await tx.updateTable("executions").set(values).where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  } else {
    await tx
      .insertInto("executions")
      .values({ instance_id: actor.instanceId, id, condition_type: type, created_at: appended.createdAt, ...values })
      .execute();
  }
  return {
    details: instanceOwnedDetails({ id, instance_id: actor.instanceId, sequence: appended.sequence, change_date: appended.createdAt }),
    created: !current,
  };
}

/** Removes the execution and, in the same transaction, every other execution's include of it. */
export async function deleteExecution(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  // An id no condition can produce names no execution.
  const type = isConditionId(id) ? parseConditionId(id).type : undefined;
  if (!type) throw notFound(`execution ${id} not found`);
  await lockIncludeGraph(tx, actor.instanceId, type);
  const current = await tx
    .selectFrom("executions")
    .select(["id", "sequence", "condition_type"])
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw notFound(`execution ${id} not found`);
  await removeReferences(tx, actor, "includes", id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    current.sequence,
    [{ type: "execution.removed", payload: {} }],
    actor,
  );
  await tx.deleteFrom("executions").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ id, instance_id: actor.instanceId, sequence: appended.sequence, change_date: appended.createdAt });
}

export function removeTargetFromExecutions(tx: Tx, actor: Actor, targetId: string): Promise<void> {
  return removeReferences(tx, actor, "targets", targetId);
}

/** Each execution that loses a reference records it as an event of its own. */
async function removeReferences(tx: Tx, actor: Actor, column: "targets" | "includes", ref: string) {
  const holders = await tx
    .selectFrom("executions")
    .select(["id", "targets", "includes", "sequence"])
    .where("instance_id", "=", actor.instanceId)
    .where(column, "@>", JSON.stringify([ref]) as never)
    .orderBy("id")
    .forUpdate()
    .execute();
  for (const holder of holders) {
    const remaining = { targets: holder.targets, includes: holder.includes, [column]: holder[column].filter((r) => r !== ref) };
    await appendAndProject(
      tx,
      { instanceId: actor.instanceId, type: AGGREGATE, id: holder.id },
      holder.sequence,
      [{ type: "execution.set", payload: remaining }],
      actor,
      {
        table: "executions",
        key: { instance_id: actor.instanceId, id: holder.id },
        set: { [column]: JSON.stringify(remaining[column]) },
      },
    );
  }
}

/** Include graphs span rows: one writer per instance and condition type at a time. */
async function lockIncludeGraph(tx: Tx, instanceId: string, type: ConditionType): Promise<void> {
  const key = `execution:${instanceId}:${type}`;
  await tx.selectNoFrom((eb) => eb.fn("pg_advisory_xact_lock", [eb.fn("hashtext", [eb.val(key)])]).as("locked")).execute();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function checkServed(condition: Condition, catalog: ExecutionCatalog): void {
  if ("method" in condition && !catalog.methods.has(condition.method)) {
    throw notFound(`method ${condition.method} is not served here; see ListAvailableExecutionMethods`);
  }
  if ("service" in condition && !catalog.services.has(condition.service)) {
    throw notFound(`service ${condition.service} is not served here; see ListAvailableExecutionServices`);
  }
  if ("name" in condition && !catalog.functions.has(condition.name)) {
    throw notFound(`function ${condition.name} does not exist; see ListAvailableExecutionFunctions`);
  }
}

/** Locks the targets against a concurrent delete until this transaction ends. */
async function requireTargets(tx: Tx, instanceId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await tx.selectFrom("targets").select("id").where("instance_id", "=", instanceId).where("id", "in", ids).forShare().execute();
  const present = new Set(found.map((t) => t.id));
  const missing = ids.filter((t) => !present.has(t));
  if (missing.length > 0) throw notFound(`targets not found: ${missing.join(", ")}`);
}
