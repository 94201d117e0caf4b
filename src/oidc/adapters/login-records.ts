import type { Db } from "../../store/db.js";

/**
 * Short-lived state of the login pages kept on the server, in the provider's storage table
 * (`oidc_payloads`, under models of their own, swept with it when they expire): an external
 * login's state and result, a WebAuthn challenge of an interaction. Keyed by the caller.
 */

export async function putRecord(db: Db, instanceId: string, model: string, id: string, payload: object, ttlS: number): Promise<void> {
  const values = {
    payload: JSON.stringify(payload),
    grant_id: null,
    uid: null,
    user_code: null,
    expires_at: new Date(Date.now() + ttlS * 1000),
    consumed_at: null,
  };
  await db
    .insertInto("oidc_payloads")
    .values({ instance_id: instanceId, model, id, ...values })
    .onConflict((oc) => oc.columns(["instance_id", "model", "id"]).doUpdateSet(values))
    .execute();
}

export async function readRecord<T>(db: Db, instanceId: string, model: string, id: string): Promise<T | undefined> {
  const row = await db
    .selectFrom("oidc_payloads")
    .select("payload")
    .where("instance_id", "=", instanceId)
    .where("model", "=", model)
    .where("id", "=", id)
    .where("expires_at", ">", new Date())
    .executeTakeFirst();
  return row?.payload as T | undefined;
}

/** Read and deleted in one statement: of two concurrent requests with one key, one gets it. */
export async function takeRecord<T>(db: Db, instanceId: string, model: string, id: string): Promise<T | undefined> {
  const row = await db
    .deleteFrom("oidc_payloads")
    .where("instance_id", "=", instanceId)
    .where("model", "=", model)
    .where("id", "=", id)
    .where("expires_at", ">", new Date())
    .returning("payload")
    .executeTakeFirst();
  return row?.payload as T | undefined;
}

export async function dropRecord(db: Db, instanceId: string, model: string, id: string): Promise<void> {
  await db.deleteFrom("oidc_payloads").where("instance_id", "=", instanceId).where("model", "=", model).where("id", "=", id).execute();
}

/**
 * Keeps a record until `expiresAt` unless one under the key is still unexpired: true when it
 * was kept. One statement, so of two concurrent calls with one key exactly one gets true
 * (SAML's assertion IDs, each accepted once).
 */
export async function putRecordOnce(db: Db, instanceId: string, model: string, id: string, payload: object, expiresAt: Date): Promise<boolean> {
  const values = { payload: JSON.stringify(payload), grant_id: null, uid: null, user_code: null, expires_at: expiresAt, consumed_at: null };
  const kept = await db
    .insertInto("oidc_payloads")
    .values({ instance_id: instanceId, model, id, ...values })
    .onConflict((oc) => oc.columns(["instance_id", "model", "id"]).doUpdateSet(values).where("oidc_payloads.expires_at", "<=", new Date()))
    .returning("id")
    .executeTakeFirst();
  return kept !== undefined;
}
