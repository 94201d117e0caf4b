import { generateKeyPair, type JsonWebKey } from "node:crypto";
import { promisify } from "node:util";
import type { SecretBox } from "../../crypto/encryption.js";
import { appendEvents } from "../../store/append.js";
import type { Db, Tx } from "../../store/db.js";
import { SYSTEM_EDITOR } from "../../store/editor.js";
import { lastSequence } from "../../store/event-reads.js";
import { newId } from "../../store/ids.js";
import { notFound } from "../errors.js";
import { planRotation, type KeyPolicy, type RotationPlan, type SigningKeyRow } from "./rotation.js";

const generate = promisify(generateKeyPair);
const AGGREGATE = "signing_keys";

async function newKeyPair(algorithm: KeyPolicy["algorithm"]): Promise<{ publicJwk: JsonWebKey; privateJwk: JsonWebKey }> {
  const pair = algorithm === "ES256" ? await generate("ec", { namedCurve: "P-256" }) : await generate("rsa", { modulusLength: 2048 });
  return { publicJwk: pair.publicKey.export({ format: "jwk" }), privateJwk: pair.privateKey.export({ format: "jwk" }) };
}

export function signingKeyRows(db: Db | Tx, instanceId: string): Promise<SigningKeyRow[]> {
  return db.selectFrom("signing_keys").selectAll().where("instance_id", "=", instanceId).execute();
}

/**
 * Brings an instance's keys in order at `now` (see planRotation), or rotates them when
 * `force` is set; returns the keys afterwards. The instance row is locked while keys change,
 * so processes that find the same key due at the same time create one successor, not two.
 * Key generation (RSA takes tens of milliseconds) runs only when a change is due.
 */
export async function maintainSigningKeys(tx: Tx, instanceId: string, now: Date, policy: KeyPolicy, box: SecretBox, force = false): Promise<SigningKeyRow[]> {
  let rows = await signingKeyRows(tx, instanceId);
  if (isSettled(planRotation(rows, now, policy, force))) return rows;
  const instance = await tx
    .selectFrom("instances")
    .select("id")
    .where("instance_id", "=", instanceId)
    .where("id", "=", instanceId)
    .forUpdate()
    .executeTakeFirst();
  if (!instance) throw notFound(`no instance with the id "${instanceId}"`);
  rows = await signingKeyRows(tx, instanceId);
  const plan = planRotation(rows, now, policy, force);
  if (isSettled(plan)) return rows;
  await apply(tx, instanceId, plan, policy, box, now);
  return signingKeyRows(tx, instanceId);
}

function isSettled(plan: RotationPlan): boolean {
  return !plan.create && plan.remove.length === 0;
}

async function apply(tx: Tx, instanceId: string, plan: RotationPlan, policy: KeyPolicy, box: SecretBox, now: Date): Promise<void> {
  const aggregate = { instanceId, type: AGGREGATE, id: instanceId };
  const events: { type: string; payload: unknown }[] = [];
  if (plan.remove.length > 0) {
    await tx.deleteFrom("signing_keys").where("instance_id", "=", instanceId).where("id", "in", plan.remove).execute();
    events.push(...plan.remove.map((kid) => ({ type: "signing_key.removed", payload: { kid } })));
  }
  if (plan.retire) {
    await tx.updateTable("signing_keys").set({ retires_at: plan.retire.at }).where("instance_id", "=", instanceId).where("id", "=", plan.retire.id).execute();
    events.push({ type: "signing_key.retiring", payload: { kid: plan.retire.id, at: plan.retire.at.toISOString() } });
  }
  if (plan.create) {
    const kid = newId();
    const { publicJwk, privateJwk } = await newKeyPair(policy.algorithm);
    const published = { ...publicJwk, kid, alg: policy.algorithm, use: "sig" };
    await tx
      .insertInto("signing_keys")
      .values({
        instance_id: instanceId,
        id: kid,
        algorithm: policy.algorithm,
        public_jwk: JSON.stringify(published),
        private_jwk: box.encrypt(JSON.stringify({ ...privateJwk, kid, alg: policy.algorithm, use: "sig" })),
        created_at: now,
        activates_at: plan.create.activatesAt,
      })
      .execute();
    // The public key only: an event log must never hold key material that signs.
    events.push({
      type: "signing_key.added",
      payload: { kid, algorithm: policy.algorithm, publicJwk: published, activatesAt: plan.create.activatesAt.toISOString() },
    });
  }
  await appendEvents(tx, aggregate, await lastSequence(tx, aggregate), events, SYSTEM_EDITOR);
}

/** The private JWK of a key, opened with the master key, for signing. */
export function privateJwkOf(row: SigningKeyRow, box: SecretBox): JsonWebKey {
  return JSON.parse(box.decrypt(row.private_jwk)) as JsonWebKey;
}
