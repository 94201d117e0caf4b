import type { Db } from "../../store/eventstore.js";
import { addMachineUser } from "../user/commands.js";
import { addMembership } from "../membership/commands.js";
import { addPersonalAccessToken } from "../pat/commands.js";
import { addInstance } from "./commands.js";
import { hasAnyInstance } from "./queries.js";

export const ADMIN_USERNAME = "platform-admin";
const BOOTSTRAP = "system";
/** The first admin's token does not expire; rotate it once real admins exist. */
const ADMIN_PAT_EXPIRY = new Date("9999-12-31T23:59:59Z");

/**
 * On an empty database: the first instance, its default organization, and the machine
 * user platform-admin owning both the instance and the system. Returns the admin's token,
 * or undefined when the database was not empty. Serialized across processes, so that
 * several workers starting at once bootstrap exactly once.
 */
export interface BootstrapHooks {
  /** Runs once the database is known to be empty, before anything is created. */
  beforeCreate(): Promise<void>;
  /** Runs with the admin token before the transaction commits: a failure rolls it back. */
  beforeCommit(token: string): Promise<void>;
}

export async function bootstrapFirstInstance(
  db: Db,
  domain: string,
  hooks: BootstrapHooks,
): Promise<{ instanceId: string } | undefined> {
  return db.transaction().execute(async (tx) => {
    await tx.selectNoFrom((eb) => eb.fn("pg_advisory_xact_lock", [eb.lit(1_296_000_001)]).as("locked")).execute();
    if (await hasAnyInstance(tx)) return undefined;
    await hooks.beforeCreate();
    const { instanceId, orgId } = await addInstance(tx, { name: "Default", domain, defaultOrgName: "Default" }, BOOTSTRAP);
    const actor = { instanceId, userId: BOOTSTRAP };
    const admin = await addMachineUser(tx, actor, { orgId, username: ADMIN_USERNAME, name: "Platform administrator" });
    await addMembership(tx, actor, { userId: admin.id, contextType: "instance", contextId: instanceId, roles: ["IAM_OWNER"] });
    await addMembership(tx, actor, { userId: admin.id, contextType: "system", contextId: "", roles: ["SYSTEM_OWNER"] });
    const { token } = await addPersonalAccessToken(tx, actor, { userId: admin.id, expiresAt: ADMIN_PAT_EXPIRY });
    await hooks.beforeCommit(token);
    return { instanceId };
  });
}
