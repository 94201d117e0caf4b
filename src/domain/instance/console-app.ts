import type { Tx } from "../../store/db.js";
import { addApp } from "../app/commands.js";
import type { OidcConfig } from "../app/model.js";
import type { Actor } from "../details.js";
import { addProject } from "../project/commands.js";

/**
 * The administration console's application (console/, served at /ui/console/): a public
 * OpenID Connect client (authorization code with PKCE, refresh tokens) in a project
 * "Platform" of the instance's default organization, as ZITADEL provisions its console. Its
 * redirect URIs are paths: the provider resolves them against the issuer of the request
 * (oidc/models/clients.ts), so the console signs in on every domain the instance has, now or later,
 * without an update per domain. Paths are refused for every other application
 * (app/oidc-rules.ts), and the service alone manages this one (`refuseConsoleChange`).
 */
const CONSOLE_PROJECT_NAME = "Platform";
const CONSOLE_APP_NAME = "Console";

const CONSOLE_OIDC_CONFIG: OidcConfig = {
  redirectUris: ["/ui/console/callback"],
  postLogoutRedirectUris: ["/ui/console/"],
  responseTypes: ["code"],
  grantTypes: ["authorization_code", "refresh_token"],
  appType: "user_agent",
  authMethod: "none",
  devMode: false,
  accessTokenType: "bearer",
  accessTokenRoleAssertion: false,
  idTokenRoleAssertion: false,
  idTokenUserinfoAssertion: false,
  clockSkewMs: 0,
  additionalOrigins: [],
};

/** Creates the console's project and application in `orgId` and records the client ID on the instance. */
export async function provisionConsoleApp(tx: Tx, actor: Actor, orgId: string): Promise<string> {
  const project = await addProject(tx, actor, orgId, {
    name: uniqueProjectName(await projectNames(tx, actor.instanceId, orgId)),
    roleAssertion: false,
    roleCheck: false,
  });
  const { clientId } = await addApp(tx, actor, project.id, {
    name: CONSOLE_APP_NAME,
    config: { type: "oidc", oidc: CONSOLE_OIDC_CONFIG },
    redirectsOnIssuer: true,
  });
  await tx
    .updateTable("instances")
    .set({ console_client_id: clientId })
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", actor.instanceId)
    .execute();
  return clientId;
}

async function projectNames(tx: Tx, instanceId: string, orgId: string): Promise<Set<string>> {
  const rows = await tx.selectFrom("projects").select("name").where("instance_id", "=", instanceId).where("org_id", "=", orgId).execute();
  return new Set(rows.map((r) => r.name.toLowerCase()));
}

/** "Platform", or "Platform 2", … when an instance provisioned later already has a project of that name. */
function uniqueProjectName(taken: Set<string>): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? CONSOLE_PROJECT_NAME : `${CONSOLE_PROJECT_NAME} ${n}`;
    if (!taken.has(name.toLowerCase())) return name;
  }
}

/**
 * Instances that have no console application yet (created before the console existed),
 * each given one in its default organization at start-up. Serialized across processes like
 * the bootstrap, so workers starting together provision each instance once.
 */
export async function provisionMissingConsoleApps(tx: Tx, creator: string): Promise<number> {
  await tx.selectNoFrom((eb) => eb.fn("pg_advisory_xact_lock", [eb.lit(1_296_000_002)]).as("locked")).execute();
  const missing = await tx
    .selectFrom("instances as i")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "i.instance_id").onRef("o.id", "=", "i.default_org_id"))
    .select(["i.id", "i.default_org_id"])
    .whereRef("i.instance_id", "=", "i.id")
    .where("i.console_client_id", "is", null)
    .where("o.state", "=", "active")
    .execute();
  for (const instance of missing) await provisionConsoleApp(tx, { instanceId: instance.id, userId: creator }, instance.default_org_id);
  return missing.length;
}
