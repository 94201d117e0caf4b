import type { Tx } from "../store/db.js";
import { failedPrecondition, notFound } from "./errors.js";

/**
 * Commands that refer to another resource check it exists in the same instance, and hold a
 * share lock on it until they commit: a concurrent removal (which locks for update) waits,
 * and then removes what was added too, or the addition waits and finds nothing. Returns
 * the organization that owns it (an organization owns itself).
 */
export async function requireExisting(tx: Tx, table: "users" | "orgs", instanceId: string, id: string): Promise<string> {
  if (table === "orgs") return (await orgForShare(tx, instanceId, id)).id;
  const user = await tx.selectFrom("users").select("org_id").where("instance_id", "=", instanceId).where("id", "=", id).forShare().executeTakeFirst();
  if (!user) throw notFound(`user ${id} not found`);
  return user.org_id;
}

/**
 * requireExisting for an organization that gets something new: a deactivated one does not
 * (its share lock holds off a deactivation until the addition commits).
 */
export async function requireActiveOrg(tx: Tx, instanceId: string, id: string): Promise<void> {
  const org = await orgForShare(tx, instanceId, id);
  if (org.state !== "active") throw failedPrecondition(`organization ${id} is deactivated; reactivate it first`);
}

async function orgForShare(tx: Tx, instanceId: string, id: string) {
  const org = await tx.selectFrom("orgs").select(["id", "state"]).where("instance_id", "=", instanceId).where("id", "=", id).forShare().executeTakeFirst();
  if (!org) throw notFound(`organization ${id} not found`);
  return org;
}
