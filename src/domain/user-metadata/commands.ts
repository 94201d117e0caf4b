import type { Tx } from "../../store/db.js";
import type { Actor, ObjectDetails } from "../details.js";
import { invalidArgument, notFound } from "../errors.js";
import { changeUser, userRowForUpdate } from "../user/commands.js";

export interface MetadataEntry {
  key: string;
  value: Uint8Array;
}

/**
 * Metadata is part of its user: its changes are events of the user (key only: values may be
 * anything a customer keeps there, so the audit log names what changed, not to what).
 */
export async function setUserMetadata(tx: Tx, actor: Actor, userId: string, entries: MetadataEntry[]): Promise<ObjectDetails> {
  const keys = new Set<string>();
  for (const { key } of entries) {
    if (keys.has(key)) throw invalidArgument(`metadata: the key "${key}" is given twice`);
    keys.add(key);
  }
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const details = await changeUser(
    tx,
    actor,
    user,
    entries.map(({ key }) => ({ type: "user.metadata.set", payload: { key } })),
    {},
  );
  await tx
    .insertInto("user_metadata")
    .values(entries.map(({ key, value }) => ({ instance_id: actor.instanceId, user_id: userId, key, value, change_date: details.changeDate })))
    .onConflict((oc) =>
      oc.columns(["instance_id", "user_id", "key"]).doUpdateSet((eb) => ({ value: eb.ref("excluded.value"), change_date: eb.ref("excluded.change_date") })),
    )
    .execute();
  return details;
}

export async function removeUserMetadata(tx: Tx, actor: Actor, userId: string, key: string): Promise<ObjectDetails> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const removed = await tx
    .deleteFrom("user_metadata")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("key", "=", key)
    .executeTakeFirst();
  if (removed.numDeletedRows === 0n) throw notFound(`user ${userId} has no metadata "${key}"`);
  return changeUser(tx, actor, user, [{ type: "user.metadata.removed", payload: { key } }], {});
}
