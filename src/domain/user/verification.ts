import { consumeCode, type CodePurpose } from "../notification/codes.js";
import type { Channel } from "../notification/kinds.js";
import type { Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { failedPrecondition } from "../errors.js";
import { issueCodeMessage, type VerificationSettings } from "./code-messages.js";
import { issueInvite } from "./password-reset.js";
import { changeUser, userRowForUpdate } from "./commands.js";

/**
 * Verifying a person's email address or phone number: a code to the address (through the
 * message outbox, in the transaction of the change that asks for it) or to the caller
 * (`returnCode`, for callers that deliver it themselves), and the code's check. Events say
 * that a code was issued or the contact verified; never the code.
 */

const CONTACT = {
  email: {
    purpose: "verify_email",
    event: "user.email",
    address: (u: UserRow) => u.email,
    verified: (u: UserRow) => u.email_verified === true,
    column: "email_verified",
  },
  sms: {
    purpose: "verify_phone",
    event: "user.phone",
    address: (u: UserRow) => u.phone,
    verified: (u: UserRow) => u.phone_verified === true,
    column: "phone_verified",
  },
} as const satisfies Record<
  Channel,
  { purpose: CodePurpose; event: string; address(u: UserRow): string | null; verified(u: UserRow): boolean; column: string }
>;

/**
 * A new code for the user's unverified contact of the channel, replacing any earlier one,
 * asked for again (the event `user.email.code.added` / `user.phone.code.added` says so, not
 * the code): sent, or answered when `returnCode`. FailedPrecondition when there is nothing to verify.
 */
export async function requestVerification(
  tx: Tx,
  actor: Actor,
  s: VerificationSettings,
  userId: string,
  channel: Channel,
  returnCode: boolean,
): Promise<{ details: ObjectDetails; code?: string }> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const contact = CONTACT[channel];
  const address = contact.address(user);
  if (user.type !== "human" || !address) throw failedPrecondition(`user ${userId} has no ${channel === "email" ? "email address" : "phone number"} to verify`);
  if (contact.verified(user)) throw failedPrecondition(`the ${channel === "email" ? "email address" : "phone number"} of user ${userId} is verified already`);
  const code = await issueVerification(tx, actor, s, user, channel, address, returnCode);
  const details = await changeUser(tx, actor, user, [{ type: `${contact.event}.code.added`, payload: { sentTo: returnCode ? "caller" : address } }], {});
  return { details, ...(code && { code }) };
}

/** The code and, unless returned, its message in the outbox; no event (the change that asks for it has its own). */
async function issueVerification(
  tx: Tx,
  actor: Actor,
  s: VerificationSettings,
  user: UserRow,
  channel: Channel,
  address: string,
  returnCode: boolean,
): Promise<string | undefined> {
  const kind = CONTACT[channel].purpose;
  return issueCodeMessage(tx, s, {
    actor,
    user,
    purpose: kind,
    kind,
    address,
    ttlMs: s.codeTtlMs[channel],
    returnCode,
    ...(channel === "email" && { path: s.paths.verifyEmail }),
  });
}

/**
 * Checks a code for the user's contact of the channel. Valid: the contact is verified
 * (`user.email.verified` / `user.phone.verified`). Not valid, whatever the reason: undefined,
 * and the failed try is counted; the caller commits that and then answers InvalidArgument.
 */
export async function verifyContact(
  tx: Tx,
  actor: Actor,
  s: Pick<VerificationSettings, "box">,
  userId: string,
  channel: Channel,
  code: string,
): Promise<ObjectDetails | undefined> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const contact = CONTACT[channel];
  const address = contact.address(user);
  if (!address || contact.verified(user)) return undefined;
  if (!(await consumeCode(tx, s.box, { instanceId: actor.instanceId, userId, purpose: contact.purpose, target: address, code }))) return undefined;
  return changeUser(tx, actor, user, [{ type: `${contact.event}.verified`, payload: {} }], { [contact.column]: true });
}

/**
 * After a create or patch, in its transaction: a code for each contact it set and left
 * unverified, sent with the change's own event (none for a verified one); with `invite`, an
 * invitation takes the email's place (accepting it verifies the address).
 */
export async function verifyChangedContacts(
  tx: Tx,
  actor: Actor,
  s: VerificationSettings,
  userId: string,
  changed: { email?: boolean; phone?: boolean; invite?: boolean },
  returnCode: boolean,
): Promise<{ emailCode?: string; phoneCode?: string; inviteCode?: string }> {
  // Nothing set unverified (a person created with verified contacts): no row to read and lock again.
  if (!changed.invite && !changed.email && !changed.phone) return {};
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  const out: { emailCode?: string; phoneCode?: string; inviteCode?: string } = {};
  if (changed.invite) {
    const code = await issueInvite(tx, actor, s, user, returnCode);
    if (code) out.inviteCode = code;
  } else if (changed.email && user.email && !user.email_verified) {
    const code = await issueVerification(tx, actor, s, user, "email", user.email, returnCode);
    if (code) out.emailCode = code;
  }
  if (changed.phone && user.phone && !user.phone_verified) {
    const code = await issueVerification(tx, actor, s, user, "sms", user.phone, returnCode);
    if (code) out.phoneCode = code;
  }
  return out;
}
