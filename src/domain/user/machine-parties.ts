import { sql } from "kysely";
import type { Db } from "../../store/db.js";
import type { AccessTokenKind } from "./model.js";
import { partyKey, type PartyKey } from "../app/parties.js";
import { userSchemaAllowsSql } from "../user-schema/users.js";

/** An active machine user of an active organization, acting for itself. */
export interface MachineParty {
  kind: "machine";
  /** Its username for client_credentials, its id for the jwt-bearer grant. */
  clientId: string;
  userId: string;
  orgId: string;
  accessTokenType: AccessTokenKind;
  secretHash: string | null;
  keys: PartyKey[];
}

/** How a machine user is named as a client: by username (client_credentials) or by id (jwt-bearer). */
export type MachineName = { username: string } | { userId: string };

/**
 * The machine user named so, with its organization, in any state. By id (jwt-bearer, keys)
 * also a schema user whose schema allows keys.
 */
function machineUsers(db: Db, instanceId: string, by: MachineName) {
  const query = db
    .selectFrom("users as u")
    .innerJoin("orgs as o", (j) => j.onRef("o.instance_id", "=", "u.instance_id").onRef("o.id", "=", "u.org_id"))
    .where("u.instance_id", "=", instanceId);
  if (!("userId" in by)) return query.where("u.type", "=", "machine").where(sql<string>`lower(u.username)`, "=", by.username.toLowerCase());
  return query
    .where("u.id", "=", by.userId)
    .where((eb) => eb.or([eb("u.type", "=", "machine"), eb.and([eb("u.type", "=", "schema"), userSchemaAllowsSql("key")])]));
}

/**
 * A machine user that is no party (machineParty): why a token request naming it was refused
 * (oidc/helpers/token-sign-ins.ts). Undefined: no machine user has that name.
 */
export async function refusedMachine(
  db: Db,
  instanceId: string,
  by: MachineName,
): Promise<{ id: string; orgId: string; state: string; orgActive: boolean } | undefined> {
  const row = await machineUsers(db, instanceId, by).select(["u.id", "u.org_id", "u.state", "o.state as org_state"]).executeTakeFirst();
  return row && { id: row.id, orgId: row.org_id, state: row.state, orgActive: row.org_state === "active" };
}

/**
 * The machine user acting as a client: by username (case-insensitive, as usernames are
 * unique) for client credentials, by id for the jwt-bearer grant.
 */
export async function machineParty(db: Db, instanceId: string, by: MachineName): Promise<MachineParty | undefined> {
  const row = await machineUsers(db, instanceId, by)
    .leftJoin("user_secrets as s", (j) => j.onRef("s.instance_id", "=", "u.instance_id").onRef("s.user_id", "=", "u.id").on("s.kind", "=", "client_secret"))
    .select(["u.id", "u.username", "u.org_id", "u.access_token_type", "s.hash"])
    .where("u.state", "=", "active")
    .where("o.state", "=", "active")
    .executeTakeFirst();
  if (!row) return undefined;
  const keys =
    "userId" in by
      ? await db
          .selectFrom("user_keys")
          .select(["id", "public_key", "expires_at"])
          .where("instance_id", "=", instanceId)
          .where("user_id", "=", row.id)
          .where("expires_at", ">", new Date())
          .execute()
      : [];
  return {
    kind: "machine",
    clientId: "userId" in by ? row.id : row.username,
    userId: row.id,
    orgId: row.org_id,
    accessTokenType: row.access_token_type ?? "bearer",
    secretHash: row.hash,
    keys: keys.map(partyKey),
  };
}
