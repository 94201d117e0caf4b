import { appendEvents, lastSequence, type Tx } from "../../store/eventstore.js";
import type { Actor } from "../details.js";
import { invalidArgument } from "../errors.js";
import { isFeatureName } from "./catalog.js";

export async function setInstanceFeature(tx: Tx, actor: Actor, name: string, enabled: boolean) {
  if (!isFeatureName(name)) throw invalidArgument(`unknown feature flag ${name}`);
  const aggregate = { instanceId: actor.instanceId, type: "instance.feature", id: name };
  const appended = await appendEvents(
    tx,
    aggregate,
    await lastSequence(tx, aggregate),
    [{ type: "instance.feature.set", payload: { name, enabled } }],
    actor.userId,
  );
  await tx
    .insertInto("instance_features")
    .values({ instance_id: actor.instanceId, name, enabled, change_date: appended.createdAt })
    .onConflict((oc) => oc.columns(["instance_id", "name"]).doUpdateSet({ enabled, change_date: appended.createdAt }))
    .execute();
}
