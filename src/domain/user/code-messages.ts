import type { SecretBox } from "../../crypto/encryption.js";
import { issueCode, type CodePurpose } from "../notification/codes.js";
import { KINDS, type Channel, type MessageKind } from "../notification/kinds.js";
import { recordNotification } from "../notification/record.js";
import type { Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor } from "../details.js";

/** The codes a user is sent (verification.ts, password-reset.ts, sign-in codes) and their messages: the master key's box, lifetimes, links. */
export interface VerificationSettings {
  box: SecretBox;
  /** How long a code lasts: per channel (PLATFORM_CODE_TTL_EMAIL, PLATFORM_CODE_TTL_PHONE), an invitation's (PLATFORM_CODE_TTL_INVITE), and a sign-in code's (PLATFORM_CODE_TTL_OTP). */
  codeTtlMs: Record<Channel, number> & { invite: number; otp: number };
  /** A message not sent within this fails (PLATFORM_NOTIFICATION_MAX_AGE). */
  messageMaxAgeMs: number;
  /** At most one password reset code per user this often (PLATFORM_PASSWORD_RESET_INTERVAL). */
  resetIntervalMs: number;
  /** The pages of the login UI that messages link to: paths of the instance's address, with the user and code in the query. */
  paths: Record<"verifyEmail" | "resetPassword" | "acceptInvite", (userId: string, code: string) => string>;
}

export interface CodeMessage {
  actor: Actor;
  user: UserRow;
  purpose: CodePurpose;
  /** The message that carries it; its channel is the kind's. */
  kind: MessageKind;
  /** Where it goes, and what the code proves: a code is good only for this address. */
  address: string;
  ttlMs: number;
  /** Answer the code instead of sending it. */
  returnCode: boolean;
  /** The login page the message links to, given the user and code. */
  path?: (userId: string, code: string) => string;
}

/**
 * A fresh code of a purpose for the user (replacing the earlier one) and, unless it is
 * returned to the caller, its message in the outbox, in the caller's transaction: it goes out
 * when the change that asks for it commits. Answers the code only when returned.
 */
export async function issueCodeMessage(tx: Tx, s: VerificationSettings, m: CodeMessage): Promise<string | undefined> {
  const issued = await issueCode(tx, s.box, { instanceId: m.actor.instanceId, userId: m.user.id, purpose: m.purpose, target: m.address, ttlMs: m.ttlMs });
  if (m.returnCode) return issued.code;
  await recordNotification(tx, s.box, {
    instanceId: m.actor.instanceId,
    orgId: m.user.org_id,
    userId: m.user.id,
    kind: m.kind,
    channel: KINDS[m.kind].channel,
    recipient: m.address,
    content: { code: issued.code, expiresInS: Math.round(m.ttlMs / 1000), ...(m.path && { path: m.path(m.user.id, issued.code) }) },
    expiresAt: new Date(Math.min(issued.expiresAt.getTime(), Date.now() + s.messageMaxAgeMs)),
  });
  return undefined;
}
