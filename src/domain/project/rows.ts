import type { Tx } from "../../store/db.js";
import { failedPrecondition, notFound } from "../errors.js";
import type { ProjectRow } from "./model.js";

/*
 * What the commands of a project's dependents (its apps, its user grants) read of it, apart
 * from the project's own commands, so that those need not import each other.
 */

/** The project, locked against concurrent changes (or, shared, against its removal) until the transaction ends. */
export async function projectRowForUpdate(tx: Tx, instanceId: string, id: string, mode: "update" | "share" = "update"): Promise<ProjectRow> {
  const query = tx.selectFrom("projects").selectAll().where("instance_id", "=", instanceId).where("id", "=", id);
  const row = await (mode === "update" ? query.forUpdate() : query.forShare()).executeTakeFirst();
  if (!row) throw notFound(`project ${id} not found`);
  return row;
}

/** Role keys as user grants and project grants keep them: sorted and once each, so equal sets compare equal. */
export const normalizedRoleKeys = (keys: readonly string[]) => [...new Set(keys)].sort();

/** FailedPrecondition naming the keys the project has no role for. */
export async function requireProjectRoles(tx: Tx, instanceId: string, projectId: string, keys: readonly string[]): Promise<void> {
  const unknown = await unknownRoleKeys(tx, instanceId, projectId, keys);
  if (unknown.length > 0) throw failedPrecondition(`project ${projectId} has no role ${unknown.map((k) => `"${k}"`).join(", ")}; add it to the project first`);
}

/** The keys among `keys` that the project has no role for, in the order given. */
async function unknownRoleKeys(tx: Tx, instanceId: string, projectId: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const known = await tx
    .selectFrom("project_roles")
    .select("key")
    .where("instance_id", "=", instanceId)
    .where("project_id", "=", projectId)
    .where((eb) => eb("key", "=", eb.fn.any(eb.val([...keys]))))
    .execute();
  const found = new Set(known.map((r) => r.key));
  return keys.filter((k) => !found.has(k));
}
