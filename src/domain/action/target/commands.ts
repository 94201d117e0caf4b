import type { SecretBox } from "../../../crypto/encryption.js";
import { randomAlphanumeric } from "../../../crypto/tokens.js";
import { appendEvents, createdBy, type Tx } from "../../../store/eventstore.js";
import { newId } from "../../../store/ids.js";
import type { TargetUpdate } from "../../../store/schema.js";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../../details.js";
import { alreadyExists, notFound } from "../../errors.js";
import { removeTargetFromExecutions } from "../execution/commands.js";
import { AGGREGATE, SIGNING_KEY_LENGTH, type TargetPatch, type TargetSpec } from "./model.js";

export async function createTarget(tx: Tx, actor: Actor, spec: TargetSpec, box: SecretBox) {
  await ensureNameFree(tx, actor.instanceId, spec.name);
  const id = newId();
  const signingKey = randomAlphanumeric(SIGNING_KEY_LENGTH);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    0,
    [{ type: "target.added", payload: spec }],
    actor.userId,
  );
  const row = {
    instance_id: actor.instanceId,
    id,
    name: spec.name,
    target_type: spec.kind,
    url: spec.url,
    timeout_ms: spec.timeoutMs,
    execution_mode: spec.mode,
    signing_key: box.encrypt(signingKey),
    ...createdBy(appended),
  };
  await tx.insertInto("targets").values(row).execute();
  return { details: instanceOwnedDetails(row), signingKey };
}

/** A patch that changes nothing succeeds without an event. */
export async function patchTarget(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: TargetPatch,
  box: SecretBox,
): Promise<{ details: ObjectDetails; signingKey?: string }> {
  const current = await lockTarget(tx, actor.instanceId, id);
  const changes: Partial<TargetSpec> = {};
  if (patch.name !== undefined && patch.name !== current.name) changes.name = patch.name;
  if (patch.endpoint && (patch.endpoint.kind !== current.target_type || patch.endpoint.url !== current.url)) {
    changes.kind = patch.endpoint.kind;
    changes.url = patch.endpoint.url;
  }
  if (patch.timeoutMs !== undefined && patch.timeoutMs !== current.timeout_ms) changes.timeoutMs = patch.timeoutMs;
  if (patch.mode !== undefined && patch.mode !== current.execution_mode) changes.mode = patch.mode;
  const signingKey = patch.regenerateSigningKey ? randomAlphanumeric(SIGNING_KEY_LENGTH) : undefined;
  if (Object.keys(changes).length === 0 && !signingKey) return { details: instanceOwnedDetails(current) };
  if (changes.name !== undefined) await ensureNameFree(tx, actor.instanceId, changes.name);

  const events = [];
  if (Object.keys(changes).length > 0) events.push({ type: "target.changed", payload: changes });
  if (signingKey) events.push({ type: "target.signing_key.regenerated", payload: {} });
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    current.sequence,
    events,
    actor.userId,
  );
  const update: TargetUpdate = {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.kind !== undefined && { target_type: changes.kind, url: changes.url }),
    ...(changes.timeoutMs !== undefined && { timeout_ms: changes.timeoutMs }),
    ...(changes.mode !== undefined && { execution_mode: changes.mode }),
    ...(signingKey !== undefined && {
      signing_key: box.encrypt(signingKey),
      previous_signing_key: current.signing_key,
      signing_key_changed_at: appended.createdAt,
    }),
    change_date: appended.createdAt,
    sequence: appended.sequence,
  };
  await tx.updateTable("targets").set(update).where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  const details = instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
  return signingKey ? { details, signingKey } : { details };
}

/** Removes the target and, in the same transaction, every execution's reference to it. */
export async function deleteTarget(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await lockTarget(tx, actor.instanceId, id);
  await removeTargetFromExecutions(tx, actor, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    current.sequence,
    [{ type: "target.removed", payload: { name: current.name } }],
    actor.userId,
  );
  await tx.deleteFrom("targets").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

async function lockTarget(tx: Tx, instanceId: string, id: string) {
  const row = await tx
    .selectFrom("targets")
    .selectAll()
    .where("instance_id", "=", instanceId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(`target ${id} not found`);
  return row;
}

async function ensureNameFree(tx: Tx, instanceId: string, name: string) {
  const taken = await tx
    .selectFrom("targets")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("name", "=", name)
    .executeTakeFirst();
  if (taken) throw alreadyExists(`a target named "${name}" already exists`);
}
