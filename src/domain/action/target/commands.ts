import type { SecretBox } from "../../../crypto/encryption.js";
import { randomAlphanumeric } from "../../../crypto/tokens.js";
import { appendAndProject, appendEvents, queueEvents } from "../../../store/append.js";
import type { Tx } from "../../../store/db.js";
import { eventTime } from "../../../store/event-reads.js";
import type { Appended } from "../../../store/events.js";
import { TARGET_NAME_CONSTRAINT, violatedUniqueConstraint } from "../../../store/database.js";
import { newId } from "../../../store/ids.js";
import { prepared } from "../../../store/prepared.js";
import type { TargetTable, TargetUpdate } from "../../../store/schema.js";
import type { Insertable } from "kysely";
import { instanceOwnedDetails, type Actor, type ObjectDetails } from "../../details.js";
import { alreadyExists, notFound } from "../../errors.js";
import { removeTargetFromExecutions } from "../execution/commands.js";
import { AGGREGATE, SIGNING_KEY_LENGTH, type TargetPatch, type TargetSpec } from "./model.js";

/**
 * One round trip: the events are queued (queueEvents) and the row is sent with the commit
 * (commitWith), its times read from its event in that statement. The name is left to its
 * unique index (TARGET_NAME_CONSTRAINT) rather than read first: a name taken fails the
 * row's statement, which the caller turns into AlreadyExists with targetNameTaken; the
 * events queued before it roll back with it.
 */
export async function createTarget(tx: Tx, actor: Actor, spec: TargetSpec, box: SecretBox) {
  const id = newId();
  const signingKey = randomAlphanumeric(SIGNING_KEY_LENGTH);
  const { sequence } = await queueEvents(tx, { instanceId: actor.instanceId, type: AGGREGATE, id }, 0, [{ type: "target.added", payload: spec }], actor);
  const [inserted] = await insertTarget.withCommit(tx, {
    instance_id: actor.instanceId,
    id,
    name: spec.name,
    target_type: spec.kind,
    url: spec.url,
    timeout_ms: spec.timeoutMs,
    execution_mode: spec.mode,
    signing_key: box.encrypt(signingKey),
    sequence,
  });
  return { details: instanceOwnedDetails({ id, instance_id: actor.instanceId, sequence, change_date: inserted!.change_date }), signingKey };
}

/** CreateTarget is a hot write (bench/): its statements are prepared (store/prepared.ts). */
const insertTarget = prepared(
  (db, p: Omit<Insertable<TargetTable>, "previous_signing_key" | "signing_key_changed_at" | "created_at" | "change_date"> & { sequence: number }) => {
    const added = eventTime(p.instance_id, AGGREGATE, p.id, p.sequence);
    return db
      .insertInto("targets")
      .values({
        instance_id: p.instance_id,
        id: p.id,
        name: p.name,
        target_type: p.target_type,
        url: p.url,
        timeout_ms: p.timeout_ms,
        execution_mode: p.execution_mode,
        signing_key: p.signing_key,
        created_at: added,
        change_date: added,
        sequence: p.sequence,
      })
      .returning("change_date");
  },
);

const targetNamed = prepared((db, p: { instanceId: string; name: string }) =>
  db.selectFrom("targets").select("id").where("instance_id", "=", p.instanceId).where("name", "=", p.name),
);

/** A patch that changes nothing succeeds without an event. */
export async function patchTarget(
  tx: Tx,
  actor: Actor,
  id: string,
  patch: TargetPatch,
  box: SecretBox,
): Promise<{ details: ObjectDetails; signingKey?: string }> {
  const current = await targetRowForUpdate(tx, actor.instanceId, id);
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
  const set = (appended: Appended): TargetUpdate => ({
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.kind !== undefined && { target_type: changes.kind, url: changes.url }),
    ...(changes.timeoutMs !== undefined && { timeout_ms: changes.timeoutMs }),
    ...(changes.mode !== undefined && { execution_mode: changes.mode }),
    ...(signingKey !== undefined && {
      signing_key: box.encrypt(signingKey),
      previous_signing_key: current.signing_key,
      signing_key_changed_at: appended.createdAt,
    }),
  });
  const appended = await appendAndProject(tx, { instanceId: actor.instanceId, type: AGGREGATE, id }, current.sequence, events, actor, {
    table: "targets",
    key: { instance_id: actor.instanceId, id },
    set,
  });
  const details = instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
  return signingKey ? { details, signingKey } : { details };
}

/** Removes the target and, in the same transaction, every execution's reference to it. */
export async function deleteTarget(tx: Tx, actor: Actor, id: string): Promise<ObjectDetails> {
  const current = await targetRowForUpdate(tx, actor.instanceId, id);
  await removeTargetFromExecutions(tx, actor, id);
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    current.sequence,
    [{ type: "target.removed", payload: { name: current.name } }],
    actor,
  );
  await tx.deleteFrom("targets").where("instance_id", "=", actor.instanceId).where("id", "=", id).execute();
  return instanceOwnedDetails({ ...current, sequence: appended.sequence, change_date: appended.createdAt });
}

async function targetRowForUpdate(tx: Tx, instanceId: string, id: string) {
  const row = await tx.selectFrom("targets").selectAll().where("instance_id", "=", instanceId).where("id", "=", id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`target ${id} not found`);
  return row;
}

/** A create's or rename's failure on TARGET_NAME_CONSTRAINT as the check before it would have said it; any other error as it is. */
export function targetNameTaken(error: unknown, name: string): unknown {
  return violatedUniqueConstraint(error) === TARGET_NAME_CONSTRAINT ? nameTaken(name) : error;
}

const nameTaken = (name: string) => alreadyExists(`a target named "${name}" already exists`);

async function ensureNameFree(tx: Tx, instanceId: string, name: string) {
  const [taken] = await targetNamed(tx, { instanceId, name });
  if (taken) throw nameTaken(name);
}
