import type { Tx } from "../../store/db.js";
import type { OrgRow } from "../../store/schema.js";
import { notFound } from "../errors.js";

/**
 * The organization's row, locked for the rest of the transaction: every change of the
 * organization and of its domains is serialized here (org and org-domain commands both
 * take it, so neither imports the other).
 */
export async function orgRowForUpdate(tx: Tx, instanceId: string, id: string): Promise<OrgRow> {
  const row = await tx.selectFrom("orgs").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`organization ${id} not found`);
  return row;
}
