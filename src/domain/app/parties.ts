import { configOf, type AppConfig } from "./model.js";
import type { Db } from "../../store/db.js";

/*
 * The parties that authenticate at the token endpoints (oidc/models/clients.ts): applications here,
 * machine users acting for themselves in user/machine-parties.ts.
 */

/** A public key a party signs its assertions with (PEM, SPKI). */
export interface PartyKey {
  id: string;
  publicKey: string;
  expiresAt: Date;
}

/** A key row as a party's key. */
export function partyKey(row: { id: string; public_key: string; expires_at: Date }): PartyKey {
  return { id: row.id, publicKey: row.public_key, expiresAt: row.expires_at };
}

/** An application of an active project of an active organization. */
export interface AppParty {
  kind: "app";
  clientId: string;
  appId: string;
  projectId: string;
  /** The project's project_role_check: only users with a grant on it sign in to its applications. */
  roleCheck: boolean;
  orgId: string;
  config: AppConfig;
  secretHash: string | null;
  keys: PartyKey[];
}

/** The application whose client_id this is, when it and its project and organization are active. */
export async function appParty(db: Db, instanceId: string, clientId: string): Promise<AppParty | undefined> {
  const row = await db
    .selectFrom("apps as a")
    .innerJoin("projects as p", (j) => j.onRef("p.instance_id", "=", "a.instance_id").onRef("p.id", "=", "a.project_id"))
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "a.instance_id").onRef("o.id", "=", "a.org_id"))
    .select(["a.id", "a.client_id", "a.project_id", "a.org_id", "a.type", "a.config", "a.secret_hash", "p.role_check"])
    .where("a.instance_id", "=", instanceId)
    .where("a.client_id", "=", clientId)
    .where("a.state", "=", "active")
    .where("p.state", "=", "active")
    .where("o.state", "=", "active")
    .executeTakeFirst();
  if (!row) return undefined;
  const config = configOf(row);
  const method = config.type === "oidc" ? config.oidc.authMethod : config.api.authMethod;
  // Keys matter only to applications that authenticate with them.
  const keys =
    method !== "private_key_jwt"
      ? []
      : await db
          .selectFrom("app_keys")
          .select(["id", "public_key", "expires_at"])
          .where("instance_id", "=", instanceId)
          .where("app_id", "=", row.id)
          .where("expires_at", ">", new Date())
          .execute();
  return {
    kind: "app",
    clientId: row.client_id,
    appId: row.id,
    projectId: row.project_id,
    roleCheck: row.role_check,
    orgId: row.org_id,
    config,
    secretHash: row.secret_hash,
    keys: keys.map(partyKey),
  };
}
