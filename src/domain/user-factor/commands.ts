import type { SecretBox } from "../../crypto/encryption.js";
import type { Tx } from "../../store/db.js";
import { FACTOR_EVENT, type FactorType } from "./model.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import type { LoginSettings } from "../settings/login.js";
import { alreadyExists, failedPrecondition, notFound } from "../errors.js";
import { changeUser, userRowForUpdate } from "../user/commands.js";
import { removeKeepingOne } from "./due.js";
import type { Authenticator } from "../user-schema/model.js";
import { requireSchemaAllows } from "../user-schema/users.js";
import { newRecoveryCodes, recoveryCodeHash } from "./recovery-codes.js";
import { newTotpSecret, totpStep, totpUri } from "./totp.js";

/**
 * Setting up and removing a person's second factors. Every change locks the user's row and
 * appends a user event (`user.totp.added`, `user.recovery_codes.generated`, …) without the
 * secret or the codes, which are answered once and stored sealed or keyed-hashed.
 */

/** People, and schema users whose schema allows the factor (`authenticator`; recovery codes go with any other). */
async function person(tx: Tx, actor: Actor, userId: string, authenticator?: Authenticator): Promise<UserRow> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type === "machine") throw failedPrecondition(`user ${userId} is a machine user: second factors belong to people`);
  if (user.type === "schema" && authenticator) await requireSchemaAllows(tx, user, authenticator);
  return user;
}

const factorRow = (tx: Tx, instanceId: string, userId: string, type: FactorType) =>
  tx.selectFrom("user_factors").selectAll().where("instance_id", "=", instanceId).where("user_id", "=", userId).where("type", "=", type);

/**
 * A new TOTP secret, pending until VerifyTOTP: answered once with its `otpauth://` URI. One
 * still pending is replaced (a person who lost the first QR code starts again); an active one
 * must be removed first.
 */
export async function addTotp(
  tx: Tx,
  actor: Actor,
  box: SecretBox,
  userId: string,
  issuer: string,
): Promise<{ details: ObjectDetails; secret: string; uri: string }> {
  const user = await person(tx, actor, userId, "totp");
  const existing = await factorRow(tx, actor.instanceId, userId, "totp").executeTakeFirst();
  if (existing?.state === "ready") throw failedPrecondition(`user ${userId} has a TOTP authenticator already: remove it first`);
  const secret = newTotpSecret();
  const details = await changeUser(tx, actor, user, [{ type: "user.totp.added", payload: {} }], {});
  const row = { state: "pending" as const, sealed_secret: box.encrypt(secret), last_step: null, created_at: details.changeDate };
  await tx
    .insertInto("user_factors")
    .values({ instance_id: actor.instanceId, user_id: userId, type: "totp", ...row })
    .onConflict((oc) => oc.columns(["instance_id", "user_id", "type"]).doUpdateSet(row))
    .execute();
  return { details, secret, uri: totpUri(secret, issuer, user.username) };
}

/**
 * Activates the pending TOTP with a first code from the authenticator (which is then used,
 * as every accepted code is). Undefined when the code is wrong: the caller answers "the code
 * is not valid".
 */
export async function verifyTotp(tx: Tx, actor: Actor, box: SecretBox, userId: string, code: string): Promise<ObjectDetails | undefined> {
  const user = await person(tx, actor, userId);
  const row = await factorRow(tx, actor.instanceId, userId, "totp").executeTakeFirst();
  if (!row) throw failedPrecondition(`user ${userId} has no TOTP authenticator to verify: add one first`);
  if (row.state === "ready") throw failedPrecondition(`the TOTP authenticator of user ${userId} is verified already`);
  const step = totpStep(box.decrypt(row.sealed_secret!), code);
  if (step === undefined) return undefined;
  const details = await changeUser(tx, actor, user, [{ type: "user.totp.verified", payload: {} }], {});
  await tx
    .updateTable("user_factors")
    .set({ state: "ready", last_step: step })
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("type", "=", "totp")
    .execute();
  return details;
}

/**
 * Email or SMS one-time codes as a second factor: only for an address or number the person
 * verified, since a code must reach the person and nobody else.
 */
export async function addOtp(tx: Tx, actor: Actor, userId: string, type: "otp_email" | "otp_sms"): Promise<ObjectDetails> {
  const user = await person(tx, actor, userId, type);
  const verified = type === "otp_email" ? user.email !== null && user.email_verified === true : user.phone !== null && user.phone_verified === true;
  if (!verified) throw failedPrecondition(`user ${userId} has no verified ${type === "otp_email" ? "email address" : "phone number"}: verify it first`);
  if (await factorRow(tx, actor.instanceId, userId, type).executeTakeFirst())
    throw alreadyExists(`user ${userId} has ${type === "otp_email" ? "email" : "SMS"} codes as a second factor already`);
  const details = await changeUser(tx, actor, user, [{ type: `${FACTOR_EVENT[type]}.added`, payload: {} }], {});
  await tx
    .insertInto("user_factors")
    .values({ instance_id: actor.instanceId, user_id: userId, type, state: "ready", sealed_secret: null, last_step: null, created_at: details.changeDate })
    .execute();
  return details;
}

/** Removes a factor; `keepOne` as removeKeepingOne's (due.ts). */
export async function removeFactor(tx: Tx, actor: Actor, userId: string, type: FactorType, keepOne: LoginSettings | undefined): Promise<ObjectDetails> {
  const user = await person(tx, actor, userId);
  const row = await factorRow(tx, actor.instanceId, userId, type).executeTakeFirst();
  if (!row) throw notFound(`user ${userId} has no ${DESCRIBED[type]}`);
  await removeKeepingOne(tx, user, keepOne, async () => {
    await tx.deleteFrom("user_factors").where("instance_id", "=", actor.instanceId).where("user_id", "=", userId).where("type", "=", type).execute();
  });
  return changeUser(tx, actor, user, [{ type: `${FACTOR_EVENT[type]}.removed`, payload: {} }], {});
}

const DESCRIBED: Record<FactorType, string> = {
  totp: "TOTP authenticator",
  otp_email: "email codes as a second factor",
  otp_sms: "SMS codes as a second factor",
};

/** Ten new recovery codes, answered once; the earlier set, used or not, stops working. */
export async function generateRecoveryCodes(tx: Tx, actor: Actor, box: SecretBox, userId: string): Promise<{ details: ObjectDetails; codes: string[] }> {
  const user = await person(tx, actor, userId);
  const codes = newRecoveryCodes();
  const details = await changeUser(tx, actor, user, [{ type: "user.recovery_codes.generated", payload: { count: codes.length } }], {});
  await tx.deleteFrom("user_recovery_codes").where("instance_id", "=", actor.instanceId).where("user_id", "=", userId).execute();
  await tx
    .insertInto("user_recovery_codes")
    .values(
      codes.map((code) => ({
        instance_id: actor.instanceId,
        user_id: userId,
        code_hash: recoveryCodeHash(box, actor.instanceId, userId, code),
        created_at: details.changeDate,
        used_at: null,
      })),
    )
    .execute();
  return { details, codes };
}

/** Removes every recovery code of the user. */
export async function removeRecoveryCodes(tx: Tx, actor: Actor, userId: string): Promise<ObjectDetails> {
  const user = await person(tx, actor, userId);
  const removed = await tx.deleteFrom("user_recovery_codes").where("instance_id", "=", actor.instanceId).where("user_id", "=", userId).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) throw notFound(`user ${userId} has no recovery codes`);
  return changeUser(tx, actor, user, [{ type: "user.recovery_codes.removed", payload: {} }], {});
}
