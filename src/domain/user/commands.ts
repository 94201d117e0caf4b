import { appendEvents, createdBy, type Tx } from "../../store/eventstore.js";
import { newId } from "../../store/ids.js";
import type { Actor } from "../details.js";
import { alreadyExists } from "../errors.js";
import { requireExisting } from "../existence.js";

export async function addMachineUser(
  tx: Tx,
  actor: Actor,
  input: { orgId: string; username: string; name: string },
) {
  await requireExisting(tx, "orgs", actor.instanceId, input.orgId);
  const taken = await tx
    .selectFrom("users")
    .select("id")
    .where("instance_id", "=", actor.instanceId)
    .where("username", "=", input.username)
    .executeTakeFirst();
  if (taken) throw alreadyExists(`the username ${input.username} is taken`);

  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: "user", id },
    0,
    [{ type: "user.machine.added", payload: { orgId: input.orgId, username: input.username, name: input.name } }],
    actor.userId,
  );
  await tx
    .insertInto("users")
    .values({
      instance_id: actor.instanceId,
      id,
      org_id: input.orgId,
      username: input.username,
      type: "machine",
      name: input.name,
      ...createdBy(appended),
    })
    .execute();
  return { id };
}

/**
 * Removes users with everything that hangs off them: their memberships anywhere and their
 * credentials. Nothing may dangle, so every table that refers to users is named here.
 */
export async function removeUsersWhere(tx: Tx, instanceId: string, column: "org_id" | "id", value: string): Promise<void> {
  const users = tx.selectFrom("users").select("id").where("instance_id", "=", instanceId).where(column, "=", value);
  await tx.deleteFrom("personal_access_tokens").where("instance_id", "=", instanceId).where("user_id", "in", users).execute();
  await tx.deleteFrom("memberships").where("instance_id", "=", instanceId).where("user_id", "in", users).execute();
  await tx.deleteFrom("users").where("instance_id", "=", instanceId).where(column, "=", value).execute();
}
