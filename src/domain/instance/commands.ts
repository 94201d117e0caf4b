import { appendEvents, createdBy, type Tx } from "../../store/eventstore.js";
import { newId } from "../../store/ids.js";
import { createInstanceSequence } from "../../store/instance-sequence.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { addOrg } from "../org/commands.js";

export interface NewInstance {
  name: string;
  domain: string;
  defaultOrgName: string;
}

/** Creates an instance with its primary domain and its default organization. */
export async function addInstance(tx: Tx, input: NewInstance, creator: string) {
  const domain = input.domain.toLowerCase();
  const taken = await tx
    .selectFrom("instance_domains")
    .select("instance_id")
    .where("domain", "=", domain)
    .executeTakeFirst();
  if (taken) throw alreadyExists(`the domain ${domain} belongs to another instance`);

  const instanceId = newId();
  const orgId = newId();
  await createInstanceSequence(tx, instanceId);
  const aggregate = { instanceId, type: "instance", id: instanceId };
  const appended = await appendEvents(
    tx,
    aggregate,
    0,
    [
      { type: "instance.added", payload: { name: input.name } },
      { type: "instance.domain.added", payload: { domain, primary: true } },
      { type: "instance.default.org.set", payload: { orgId } },
    ],
    creator,
  );
  await tx
    .insertInto("instances")
    .values({
      instance_id: instanceId,
      id: instanceId,
      name: input.name,
      default_org_id: orgId,
      ...createdBy(appended),
    })
    .execute();
  await tx
    .insertInto("instance_domains")
    .values({ domain, instance_id: instanceId, is_primary: true, created_at: appended.createdAt })
    .execute();
  await addOrg(tx, { instanceId, userId: creator }, { id: orgId, name: input.defaultOrgName });
  return { instanceId, orgId };
}

/** Makes an active organization the instance's default; naming the current default again changes nothing. */
export async function setDefaultOrg(tx: Tx, actor: Actor, orgId: string): Promise<ObjectDetails> {
  const instance = await tx
    .selectFrom("instances")
    .selectAll()
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", actor.instanceId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const org = await tx.selectFrom("orgs").select("state").where("instance_id", "=", actor.instanceId).where("id", "=", orgId).forShare().executeTakeFirst();
  if (!org) throw notFound(`organization ${orgId} not found`);
  if (org.state !== "active") throw failedPrecondition(`organization ${orgId} is deactivated; reactivate it first`);
  if (instance.default_org_id === orgId) return instanceOwnedDetails(instance);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: "instance", id: actor.instanceId },
    instance.sequence,
    [{ type: "instance.default.org.set", payload: { orgId } }],
    actor.userId,
  );
  await tx
    .updateTable("instances")
    .set({ default_org_id: orgId, change_date: appended.createdAt, sequence: appended.sequence })
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", actor.instanceId)
    .execute();
  return instanceOwnedDetails({ ...instance, sequence: appended.sequence, change_date: appended.createdAt });
}
