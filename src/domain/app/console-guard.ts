import type { Tx } from "../../store/db.js";
import { failedPrecondition } from "../errors.js";

/**
 * The administration console's application, its project and the organization holding them
 * are the service's to manage (instance/console-app.ts): changing, deactivating or removing
 * them would lock the administrators out of the console.
 */
export async function refuseConsoleChange(tx: Tx, instanceId: string, target: { appId?: string; projectId?: string; orgId?: string }): Promise<void> {
  const app = await tx
    .selectFrom("apps as a")
    .innerJoin("instances as i", (j) => j.onRef("i.instance_id", "=", "a.instance_id").onRef("i.console_client_id", "=", "a.client_id"))
    .select(["a.id", "a.project_id", "a.org_id"])
    .where("a.instance_id", "=", instanceId)
    .where("i.id", "=", instanceId)
    .executeTakeFirst();
  if (!app) return;
  if (target.appId === app.id) throw failedPrecondition(`application ${app.id} is the administration console's: the service manages it`);
  if (target.projectId === app.project_id)
    throw failedPrecondition(`project ${app.project_id} holds the administration console's application: the service manages it`);
  if (target.orgId === app.org_id)
    throw failedPrecondition(`organization ${app.org_id} holds the administration console's application (project ${app.project_id})`);
}
