import { appendEvents, createdBy } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import { searchPage, type Page } from "../../store/search.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, notFound } from "../errors.js";
import { checkExpiration } from "../expiration.js";
import type { KeyMaterial } from "../key-material.js";
import { appRowForUpdate } from "./commands.js";
import { configOf } from "./model.js";

const AGGREGATE = "app_key";

const keyDetails = (row: { id: string; sequence: number; change_date: Date }, orgId: string): ObjectDetails => ({
  id: row.id,
  sequence: row.sequence,
  changeDate: row.change_date,
  owner: { type: "org", id: orgId },
});

/**
 * Keys sign the client assertions of applications that authenticate with private_key_jwt
 * (RFC 7523 §2.2); other applications have no use for one (FailedPrecondition).
 */
export async function addAppKey(tx: Tx, actor: Actor, appId: string, material: KeyMaterial, expiresAt: Date) {
  checkExpiration(expiresAt);
  const app = await appRowForUpdate(tx, actor.instanceId, appId);
  const config = configOf(app);
  const method = config.type === "oidc" ? config.oidc.authMethod : config.api.authMethod;
  if (method !== "private_key_jwt") throw failedPrecondition(`application ${appId} does not authenticate with PRIVATE_KEY_JWT; keys are for those that do`);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: app.org_id },
    0,
    [{ type: "app.key.added", payload: { appId, type: material.type, publicKey: material.publicKey, expiresAt: expiresAt.toISOString() } }],
    actor,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    app_id: appId,
    key_type: material.type,
    public_key: material.publicKey,
    expires_at: expiresAt,
    ...createdBy(appended),
  };
  await tx.insertInto("app_keys").values(row).execute();
  const keyFile = material.privateKey ? JSON.stringify({ type: "application", keyId: id, key: material.privateKey, appId, clientId: app.client_id }) : "";
  return { details: keyDetails(row, app.org_id), keyFile };
}

export async function removeAppKey(tx: Tx, actor: Actor, appId: string, id: string): Promise<ObjectDetails> {
  const app = await appRowForUpdate(tx, actor.instanceId, appId);
  const key = await tx
    .deleteFrom("app_keys")
    .where("instance_id", "=", actor.instanceId)
    .where("app_id", "=", appId)
    .where("id", "=", id)
    .returning("sequence")
    .executeTakeFirst();
  if (!key) throw notFound(`key ${id} of application ${appId} not found`);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: app.org_id },
    key.sequence,
    [{ type: "app.key.removed", payload: { appId } }],
    actor,
  );
  return keyDetails({ id, sequence: appended.sequence, change_date: appended.createdAt }, app.org_id);
}

/** An application's keys, public parts only, newest first unless asked otherwise. */
export async function searchAppKeys(db: Db, instanceId: string, appId: string, page: Page) {
  const app = await db.selectFrom("apps").select("org_id").where("instance_id", "=", instanceId).where("id", "=", appId).executeTakeFirst();
  if (!app) throw notFound(`application ${appId} not found`);
  const query = db.selectFrom("app_keys").where("instance_id", "=", instanceId).where("app_id", "=", appId);
  const found = await searchPage(db, AGGREGATE, instanceId, query, (q, direction) => q.orderBy("created_at", direction).orderBy("id", direction), page);
  return {
    ...found,
    rows: found.rows.map((row) => ({ details: keyDetails(row, app.org_id), expiresAt: row.expires_at, publicKey: row.public_key, type: row.key_type })),
  };
}
