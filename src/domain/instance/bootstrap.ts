import type { Db } from "../../store/eventstore.js";
import { BOOTSTRAP_PRINCIPAL } from "../authz/principal.js";
import { addMachineUser } from "../user/commands.js";
import { addMembership } from "../membership/commands.js";
import { addPersonalAccessToken } from "../pat/commands.js";
import { addInstance } from "./commands.js";
import { hasAnyInstance } from "./queries.js";

export const ADMIN_USERNAME = "platform-admin";
const BOOTSTRAP = "system";

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
  /** When the admin token expires (PLATFORM_BOOTSTRAP_PAT_EXPIRES after now). */
  patExpiresAt: Date;
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
    const { instanceId, orgId } = await addInstance(tx, { name: "Default", domains: [domain], defaultOrgName: "Default" }, BOOTSTRAP);
    const actor = { instanceId, userId: BOOTSTRAP };
    const admin = await addMachineUser(tx, actor, { orgId, username: ADMIN_USERNAME, name: "Platform administrator" });
    await addMembership(tx, actor, { userId: admin.id, contextType: "instance", contextId: instanceId, roles: ["IAM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    await addMembership(tx, actor, { userId: admin.id, contextType: "system", contextId: "", roles: ["SYSTEM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    const { token } = await addPersonalAccessToken(tx, actor, { userId: admin.id, expiresAt: hooks.patExpiresAt });
    await hooks.beforeCommit(token);
    return { instanceId };
  });
}

/**
 * A new token for the bootstrapped administrator, for when the first one expired or was
 * lost; `npm run admin-token` calls it. Undefined when there is no such user.
 */
export async function issueAdminToken(db: Db, expiresAt: Date): Promise<{ token: string; instanceId: string } | undefined> {
  return db.transaction().execute(async (tx) => {
    // The bootstrapped one: a system member, not some instance's own user of that name.
    const admin = await tx
      .selectFrom("users as u")
      .innerJoin("memberships as m", (j) => j.onRef("m.instance_id", "=", "u.instance_id").onRef("m.user_id", "=", "u.id"))
      .select(["u.id", "u.instance_id"])
      .where("u.username", "=", ADMIN_USERNAME)
      .where("m.context_type", "=", "system")
      .orderBy("u.created_at")
      .limit(1)
      .executeTakeFirst();
    if (!admin) return undefined;
    const { token } = await addPersonalAccessToken(tx, { instanceId: admin.instance_id, userId: BOOTSTRAP }, { userId: admin.id, expiresAt });
    return { token, instanceId: admin.instance_id };
  });
}
