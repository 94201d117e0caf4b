import { createPublicKey, generateKeyPair, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { appendEvents, createdBy, type Tx } from "../../store/eventstore.js";
import { newId } from "../../store/ids.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, invalidArgument, notFound } from "../errors.js";
import { checkExpiration } from "../expiration.js";
import { lockUser } from "../user/commands.js";

const AGGREGATE = "user_key";
const generate = promisify(generateKeyPair);

export type KeySource = { generate: "rsa" | "ec" } | { publicKey: string };

export interface KeyMaterial {
  type: "rsa" | "ec";
  publicKey: string;
  /** PKCS #8 PEM of a generated pair; never stored. */
  privateKey?: string;
}

/**
 * A generated pair (RSA 2048 for RS256, P-256 for ES256) or a registered public key, which
 * must be RSA of at least 2048 bits or EC on P-256, P-384 or P-521. Key generation is slow
 * (RSA: tens of milliseconds) and runs before the transaction.
 */
export async function keyMaterial(source: KeySource): Promise<KeyMaterial> {
  if ("generate" in source) {
    const pair =
      source.generate === "rsa"
        ? await generate("rsa", { modulusLength: 2048 })
        : await generate("ec", { namedCurve: "P-256" });
    return { type: source.generate, publicKey: pem(pair.publicKey), privateKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
  }
  // createPublicKey would also take a private key and derive its public half: refuse one
  // being sent where only the public key belongs.
  if (/-----BEGIN ([A-Z0-9 ]+)-----/.exec(source.publicKey)?.[1] !== "PUBLIC KEY") {
    throw invalidArgument("publicKey must be a PEM public key in SPKI form (-----BEGIN PUBLIC KEY-----)");
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: source.publicKey, format: "pem" });
  } catch {
    throw invalidArgument("publicKey is not a PEM public key");
  }
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === "rsa" && (details.modulusLength ?? 0) >= 2048) return { type: "rsa", publicKey: pem(key) };
  if (key.asymmetricKeyType === "ec" && ["prime256v1", "secp384r1", "secp521r1"].includes(details.namedCurve ?? "")) return { type: "ec", publicKey: pem(key) };
  throw invalidArgument("publicKey must be an RSA key of at least 2048 bits or an EC key on P-256, P-384 or P-521");
}

function pem(key: KeyObject): string {
  return key.export({ type: "spki", format: "pem" }).toString();
}

/** Keys sign JWT assertions of service accounts (RFC 7523): machine users only. */
export async function addUserKey(tx: Tx, actor: Actor, userId: string, material: KeyMaterial, expiresAt: Date) {
  checkExpiration(expiresAt);
  const user = await lockUser(tx, actor.instanceId, userId);
  if (user.type !== "machine") throw failedPrecondition(`user ${userId} is a human user: keys belong to machine users`);
  const id = newId();
  const appended = await appendEvents(
    tx,
    { instanceId: actor.instanceId, type: AGGREGATE, id },
    0,
    [{ type: "user.key.added", payload: { userId, type: material.type, publicKey: material.publicKey, expiresAt: expiresAt.toISOString() } }],
    actor.userId,
  );
  await tx
    .insertInto("user_keys")
    .values({ instance_id: actor.instanceId, id, user_id: userId, key_type: material.type, public_key: material.publicKey, expires_at: expiresAt, ...createdBy(appended) })
    .execute();
  const details: ObjectDetails = { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: user.org_id } };
  const keyFile = material.privateKey ? JSON.stringify({ type: "serviceaccount", keyId: id, key: material.privateKey, userId }) : "";
  return { details, keyFile };
}

export async function removeUserKey(tx: Tx, actor: Actor, userId: string, id: string): Promise<ObjectDetails> {
  const user = await lockUser(tx, actor.instanceId, userId);
  const key = await tx
    .deleteFrom("user_keys")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .returning("sequence")
    .executeTakeFirst();
  if (!key) throw notFound(`key ${id} of user ${userId} not found`);
  const appended = await appendEvents(tx, { instanceId: actor.instanceId, type: AGGREGATE, id }, key.sequence, [{ type: "user.key.removed", payload: { userId } }], actor.userId);
  return { id, sequence: appended.sequence, changeDate: appended.createdAt, owner: { type: "org", id: user.org_id } };
}
