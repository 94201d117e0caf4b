import { consumeCode, voidCode } from "../notification/codes.js";
import type { Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition, resourceExhausted } from "../errors.js";
import { issueCodeMessage, type VerificationSettings } from "./code-messages.js";
import { changeUser, storePassword, userRowForUpdate } from "./commands.js";
import { AGGREGATE } from "./model.js";

/**
 * Password reset and invitations: a code by email that sets a password without the current
 * one. A reset code comes on request (ResetPassword, the login pages' "Forgot password?"); an
 * invitation comes with a person created without a password and, accepted, verifies the
 * address it was sent to as well. Events say a code was issued, never the code.
 */

/**
 * A reset code to the user's email address (or to the caller, `returnCode`), replacing any
 * earlier one; by SMS when the phone number is verified and the email address is not.
 * ResourceExhausted when the last one is younger than the reset interval: a mailbox is not
 * to be flooded, whoever asks.
 */
export async function requestPasswordReset(
  tx: Tx,
  actor: Actor,
  s: VerificationSettings,
  userId: string,
  returnCode: boolean,
): Promise<{ details: ObjectDetails; code?: string }> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type !== "human") throw failedPrecondition(`user ${userId} is a machine user: it has no password`);
  // By SMS only to a verified number whose owner's email is not verified; else by email.
  const bySms = user.email_verified !== true && user.phone_verified === true && Boolean(user.phone);
  const address = bySms ? user.phone : user.email;
  if (!address) throw failedPrecondition(`user ${userId} has no email address to send a reset code to`);
  // The user's own events say when the last code went out, used or not (a used code's row is gone).
  const last = await tx
    .selectFrom("events")
    .select("created_at")
    .where("instance_id", "=", actor.instanceId)
    .where("aggregate_type", "=", AGGREGATE)
    .where("aggregate_id", "=", userId)
    .where("event_type", "=", "user.password.code.added")
    .orderBy("sequence", "desc")
    .limit(1)
    .executeTakeFirst();
  const waitMs = last ? new Date(last.created_at).getTime() + s.resetIntervalMs - Date.now() : 0;
  if (waitMs > 0) throw resourceExhausted(`a reset code was issued for user ${userId} moments ago; ask again in ${Math.ceil(waitMs / 1000)} s`);
  const code = await issueCodeMessage(
    tx,
    s,
    bySms
      ? { actor, user, purpose: "password_reset", kind: "password_reset_sms", address, ttlMs: s.codeTtlMs.sms, returnCode }
      : { actor, user, purpose: "password_reset", kind: "password_reset", address, ttlMs: s.codeTtlMs.email, returnCode, path: s.paths.resetPassword },
  );
  const details = await changeUser(tx, actor, user, [{ type: "user.password.code.added", payload: { sentTo: returnCode ? "caller" : address } }], {});
  return { details, ...(code && { code }) };
}

/** An invitation for a person without a password, to its email address (or the caller); no event (the change that asks for it has its own). */
export async function issueInvite(tx: Tx, actor: Actor, s: VerificationSettings, user: UserRow, returnCode: boolean): Promise<string | undefined> {
  if (!user.email) return undefined;
  return issueCodeMessage(tx, s, {
    actor,
    user,
    purpose: "invite",
    kind: "invite",
    address: user.email,
    ttlMs: s.codeTtlMs.invite,
    returnCode,
    path: s.paths.acceptInvite,
  });
}

/** A new invitation, voiding the older one; FailedPrecondition once the person has a password. */
export async function resendInvite(
  tx: Tx,
  actor: Actor,
  s: VerificationSettings,
  userId: string,
  returnCode: boolean,
): Promise<{ details: ObjectDetails; code?: string }> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type !== "human") throw failedPrecondition(`user ${userId} is a machine user: invitations are for people`);
  if (!user.email) throw failedPrecondition(`user ${userId} has no email address to invite`);
  const password = await tx
    .selectFrom("user_secrets")
    .select("user_id")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", "password")
    .executeTakeFirst();
  if (password) throw failedPrecondition(`user ${userId} has a password already: invitations are for people without one`);
  const code = await issueInvite(tx, actor, s, user, returnCode);
  const details = await changeUser(tx, actor, user, [{ type: "user.invite.code.added", payload: { sentTo: returnCode ? "caller" : user.email } }], {});
  return { details, ...(code && { code }) };
}

/**
 * Sets a password with a reset or invitation code instead of the current password. Not
 * valid, whatever the reason: undefined, the failed try counted; the caller commits that and
 * then answers "the code is not valid". An invitation also verifies the email address.
 */
export async function setPasswordWithCode(
  tx: Tx,
  actor: Actor,
  s: Pick<VerificationSettings, "box">,
  userId: string,
  code: string,
  hash: string,
): Promise<ObjectDetails | undefined> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type !== "human" || !user.email) return undefined;
  const check = { instanceId: actor.instanceId, userId, code };
  // A reset code went to the email address or to the phone number: good while it is still the user's.
  const reset = await tx
    .selectFrom("user_codes")
    .select("target")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("purpose", "=", "password_reset")
    .executeTakeFirst();
  const resetTarget = reset && (reset.target === user.phone || reset.target === user.email) ? reset.target : user.email;
  if (await consumeCode(tx, s.box, { ...check, target: resetTarget, purpose: "password_reset" })) {
    return storePassword(tx, actor, userId, { hash, changeRequired: false });
  }
  if (!(await consumeCode(tx, s.box, { ...check, target: user.email, purpose: "invite" }))) return undefined;
  const stored = await storePassword(tx, actor, userId, { hash, changeRequired: false });
  if (user.email_verified) return stored;
  await voidCode(tx, actor.instanceId, userId, "verify_email");
  return changeUser(tx, actor, await userRowForUpdate(tx, actor.instanceId, userId), [{ type: "user.email.verified", payload: { by: "invite" } }], {
    email_verified: true,
  });
}
