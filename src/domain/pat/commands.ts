import { appendEvents, type Tx } from "../../store/eventstore.js";
import { newId } from "../../store/ids.js";
import { hashToken, newOpaqueToken } from "../../crypto/tokens.js";
import type { Actor } from "../details.js";
import { invalidArgument } from "../errors.js";
import { requireExisting } from "../existence.js";

/** Returns the token once; only its hash is stored. */
export async function addPersonalAccessToken(
  tx: Tx,
  actor: Actor,
  input: { userId: string; expiresAt: Date },
) {
  if (input.expiresAt.getTime() <= Date.now()) throw invalidArgument("the expiration date must be in the future");
  await requireExisting(tx, "users", actor.instanceId, input.userId);

  const id = newId();
  const token = newOpaqueToken();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: "pat", id },
    0,
    [{ type: "user.pat.added", payload: { userId: input.userId, expiresAt: input.expiresAt.toISOString() } }],
    actor.userId,
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
  return { id, token };
}
