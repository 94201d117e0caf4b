import type { Db } from "../../store/db.js";
import { BOOTSTRAP_PRINCIPAL } from "../authz/principal.js";
import { addMachineUser, addUser, userRowForUpdate } from "../user/commands.js";
import { issueInvite, requestPasswordReset } from "../user/password-reset.js";
import type { VerificationSettings } from "../user/code-messages.js";
import { addMembership } from "../membership/commands.js";
import { addPersonalAccessToken } from "../pat/commands.js";
import { addInstance } from "./commands.js";
import { hasAnyInstance } from "./queries.js";

export const ADMIN_USERNAME = "platform-admin";
/** The first administrator as a person, who signs in to the console. */
export const HUMAN_ADMIN_USERNAME = "admin";
const BOOTSTRAP = "system";

/**
 * On an empty database: the first instance, its default organization (with the console's
 * application), the machine user platform-admin and the person `admin`, both owning the
 * instance and the system. The machine user gets a token, the person an invitation (choose
 * a password, then the console). Returns undefined when the database was not empty.
 * Serialized across processes, so that several workers starting at once bootstrap exactly once.
 */
export interface BootstrapHooks {
  /** Runs once the database is known to be empty, before anything is created. */
  beforeCreate(): Promise<void>;
  /** Runs with the admin token and the invitation's link before the transaction commits: a failure rolls it back. */
  beforeCommit(token: string, inviteLink: string): Promise<void>;
  /** When the admin token expires (PLATFORM_BOOTSTRAP_PAT_EXPIRES after now). */
  patExpiresAt: Date;
  /** The person's address, and how invitations are issued (their lifetime, the page they link to). */
  person: { email: string; invites: VerificationSettings };
}

/** The console's first page once the invitation is accepted (login/steps/set-password-page.ts allows only console paths). */
const INVITE_RETURN_TO = "/ui/console/";

export async function bootstrapFirstInstance(db: Db, domain: string, hooks: BootstrapHooks): Promise<{ instanceId: string } | undefined> {
  return db.transaction().execute(async (tx) => {
    await tx.selectNoFrom((eb) => eb.fn("pg_advisory_xact_lock", [eb.lit(1_296_000_001)]).as("locked")).execute();
    if (await hasAnyInstance(tx)) return undefined;
    await hooks.beforeCreate();
    const { instanceId, orgId } = await addInstance(tx, { name: "Default", domains: [domain], defaultOrgName: "Default" }, { userId: BOOTSTRAP });
    const actor = { instanceId, userId: BOOTSTRAP };
    const admin = await addMachineUser(tx, actor, { orgId, username: ADMIN_USERNAME, name: "Platform administrator" });
    await addMembership(tx, actor, { userId: admin.id, contextType: "instance", contextId: instanceId, roles: ["IAM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    await addMembership(tx, actor, { userId: admin.id, contextType: "system", contextId: "", roles: ["SYSTEM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    const { token } = await addPersonalAccessToken(tx, actor, { userId: admin.id, expiresAt: hooks.patExpiresAt });
    const person = await addUser(tx, actor, orgId, {
      username: HUMAN_ADMIN_USERNAME,
      type: {
        kind: "human",
        profile: {
          givenName: "Platform",
          familyName: "Administrator",
          displayName: "Platform Administrator",
          nickName: "",
          preferredLanguage: "",
          gender: undefined,
        },
        email: { address: hooks.person.email, verified: false },
        phone: undefined,
        passwordHash: undefined,
        passwordChangeRequired: false,
      },
    });
    await addMembership(tx, actor, { userId: person.id, contextType: "instance", contextId: instanceId, roles: ["IAM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    await addMembership(tx, actor, { userId: person.id, contextType: "system", contextId: "", roles: ["SYSTEM_OWNER"] }, BOOTSTRAP_PRINCIPAL);
    const code = await issueInvite(tx, actor, hooks.person.invites, await userRowForUpdate(tx, instanceId, person.id), true);
    await hooks.beforeCommit(token, inviteLink(hooks.person.invites, person.id, code!));
    return { instanceId };
  });
}

/**
 * A new token for the bootstrapped administrator, for when the first one expired or was
 * lost; `npm run admin-token` calls it. Undefined when there is no such user.
 */
export async function issueAdminToken(db: Db, expiresAt: Date): Promise<{ token: string; instanceId: string } | undefined> {
  return db.transaction().execute(async (tx) => {
    const admin = await bootstrappedAdmin(tx, ADMIN_USERNAME);
    if (!admin) return undefined;
    const { token } = await addPersonalAccessToken(tx, { instanceId: admin.instance_id, userId: BOOTSTRAP }, { userId: admin.id, expiresAt });
    return { token, instanceId: admin.instance_id };
  });
}

/** The path and query of an invitation or reset page that leads on to the console. */
function inviteLink(s: Pick<VerificationSettings, "paths">, userId: string, code: string, kind: "acceptInvite" | "resetPassword" = "acceptInvite"): string {
  return `${s.paths[kind](userId, code)}&${new URLSearchParams({ returnTo: INVITE_RETURN_TO })}`;
}

/**
 * A new way in for the first human administrator, for `npm run admin-token`: an invitation
 * while the person has no password, else a password reset code; either link leads on to the
 * console. Undefined when there is no such person (a database bootstrapped before it existed).
 */
export async function issueAdminLink(db: Db, s: VerificationSettings): Promise<{ path: string; instanceId: string } | undefined> {
  return db.transaction().execute(async (tx) => {
    const admin = await bootstrappedAdmin(tx, HUMAN_ADMIN_USERNAME);
    if (!admin) return undefined;
    const actor = { instanceId: admin.instance_id, userId: BOOTSTRAP };
    const hasPassword = await tx
      .selectFrom("user_secrets")
      .select("user_id")
      .where("instance_id", "=", admin.instance_id)
      .where("user_id", "=", admin.id)
      .where("kind", "=", "password")
      .executeTakeFirst();
    if (hasPassword) {
      const { code } = await requestPasswordReset(tx, actor, s, admin.id, true);
      return { path: inviteLink(s, admin.id, code!, "resetPassword"), instanceId: admin.instance_id };
    }
    const code = await issueInvite(tx, actor, s, await userRowForUpdate(tx, admin.instance_id, admin.id), true);
    return { path: inviteLink(s, admin.id, code!), instanceId: admin.instance_id };
  });
}

/** The bootstrapped user of that name: a system member, not some instance's own user so named. */
function bootstrappedAdmin(tx: Db, username: string) {
  return tx
    .selectFrom("users as u")
    .innerJoin("memberships as m", (j) => j.onRef("m.instance_id", "=", "u.instance_id").onRef("m.user_id", "=", "u.id"))
    .select(["u.id", "u.instance_id"])
    .where("u.username", "=", username)
    .where("m.context_type", "=", "system")
    .orderBy("u.created_at")
    .limit(1)
    .executeTakeFirst();
}
