import { appendEvents } from "../../store/append.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import { hashToken, newOpaqueToken } from "../../crypto/tokens.js";
import type { Actor, ObjectDetails } from "../details.js";
import { notFound } from "../errors.js";
import { requireExisting } from "../existence.js";
import { checkExpiration } from "../expiration.js";
import { userRowForUpdate } from "../user/commands.js";
import { requireSchemaAllows } from "../user-schema/users.js";

const AGGREGATE = "pat";

/** Returns the token once; only its hash is stored. */
export async function addPersonalAccessToken(tx: Tx, actor: Actor, input: { userId: string; expiresAt: Date }) {
  checkExpiration(input.expiresAt);
  // Locked as every change of a user's credentials: a concurrent DeleteUser cannot leave this token behind.
  const user = await userRowForUpdate(tx, actor.instanceId, input.userId);
  if (user.type === "schema") await requireSchemaAllows(tx, user, "pat");
  const orgId = user.org_id;
  const id = newId();
  const token = newOpaqueToken();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId },
    0,
    [{ type: "user.pat.added", payload: { userId: input.userId, expiresAt: input.expiresAt.toISOString() } }],
    actor,
  );
  await tx
    .insertInto("personal_access_tokens")
    .values({
      instance_id: actor.instanceId,
      id,
      user_id: input.userId,
      token_hash: hashToken(token),
      expires_at: input.expiresAt,
      created_at: appended.createdAt,
    })
    .execute();
  const details: ObjectDetails = { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: orgId } };
  return { id, token, details };
}

/** The token stops working at once: authentication finds no row for its hash. */
export async function removePersonalAccessToken(tx: Tx, actor: Actor, userId: string, id: string): Promise<ObjectDetails> {
  const orgId = await requireExisting(tx, "users", actor.instanceId, userId);
  const removed = await tx
    .deleteFrom("personal_access_tokens")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (removed.numDeletedRows === 0n) throw notFound(`personal access token ${id} of user ${userId} not found`);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id, orgId },
    1,
    [{ type: "user.pat.removed", payload: { userId } }],
    actor,
  );
  return { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: orgId } };
}
