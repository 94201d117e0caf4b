import { appendEvents, createdBy, type Tx } from "../../store/eventstore.js";
import { newId } from "../../store/ids.js";
import type { Actor } from "../details.js";

export async function addOrg(tx: Tx, actor: Actor, input: { id?: string; name: string }) {
  const id = input.id ?? newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: "org", id },
    0,
    [{ type: "org.added", payload: { name: input.name } }],
    actor.userId,
  );
  await tx
    .insertInto("orgs")
    .values({
      instance_id: actor.instanceId,
      id,
      name: input.name,
      ...createdBy(appended),
    })
    .execute();
  return { id };
}
