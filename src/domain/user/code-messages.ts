import { issueCode, type CodePurpose } from "../notification/codes.js";
import { KINDS, type MessageKind } from "../notification/kinds.js";
import { recordNotification } from "../notification/record.js";
import type { Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor } from "../details.js";
import type { VerificationSettings } from "./verification.js";

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
