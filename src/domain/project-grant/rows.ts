import type { Tx } from "../../store/db.js";
import { notFound } from "../errors.js";
import type { ProjectGrantRow } from "./model.js";

/*
 * What the commands of user grants read of the project grant they are made under, apart
 * from the project grants' own commands, so that those need not import each other.
 */

/**
 * The grant of a project to an organization, share-locked: its deactivation, a change of its
 * roles or its removal waits for the user grant being made under it, and then takes it into
 * account.
 */
export async function projectGrantForShare(
  tx: Tx,
  instanceId: string,
  by: { id: string } | { projectId: string; grantedOrgId: string },
): Promise<ProjectGrantRow> {
  let query = tx.selectFrom("project_grants").selectAll().where("instance_id", "=", instanceId);
  query = "id" in by ? query.where("id", "=", by.id) : query.where("project_id", "=", by.projectId).where("granted_org_id", "=", by.grantedOrgId);
  const row = await query.forShare().executeTakeFirst();
  if (!row) throw notFound("id" in by ? `project grant ${by.id} not found` : `project ${by.projectId} is not granted to organization ${by.grantedOrgId}`);
  return row;
}
