import { appendEvents, createdBy } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, notFound } from "../errors.js";
import type { KeyMaterial } from "../key-material.js";
import { checkExpiration } from "../expiration.js";
import { userRowForUpdate } from "../user/commands.js";
import { requireSchemaAllows } from "../user-schema/users.js";

const AGGREGATE = "user_key";

/** Keys sign JWT assertions of service accounts (RFC 7523): machine users only. */
export async function addUserKey(tx: Tx, actor: Actor, userId: string, material: KeyMaterial, expiresAt: Date) {
  checkExpiration(expiresAt);
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type === "human") throw failedPrecondition(`user ${userId} is a human user: keys belong to machine users`);
  if (user.type === "schema") await requireSchemaAllows(tx, user, "key");
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: user.org_id },
    0,
    [{ type: "user.key.added", payload: { userId, type: material.type, publicKey: material.publicKey, expiresAt: expiresAt.toISOString() } }],
    actor,
  );
  await tx
    .insertInto("user_keys")
    .values({
      instance_id: actor.instanceId,
      id,
      user_id: userId,
      key_type: material.type,
      public_key: material.publicKey,
      expires_at: expiresAt,
      ...createdBy(appended),
    })
    .execute();
  const details: ObjectDetails = { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: user.org_id } };
  const keyFile = material.privateKey ? JSON.stringify({ type: "serviceaccount", keyId: id, key: material.privateKey, userId }) : "";
  return { details, keyFile };
}

export async function removeUserKey(tx: Tx, actor: Actor, userId: string, id: string): Promise<ObjectDetails> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const key = await tx
    .deleteFrom("user_keys")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .returning("sequence")
    .executeTakeFirst();
  if (!key) throw notFound(`key ${id} of user ${userId} not found`);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId: user.org_id },
    key.sequence,
    [{ type: "user.key.removed", payload: { userId } }],
    actor,
  );
  return { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: user.org_id } };
}
