import type { SecretBox } from "../../crypto/encryption.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { Channel, MessageKind } from "./kinds.js";

/**
 * What a message carries that cannot be read back later: its code and link, and how long
 * they last. Sealed with the master key while the message waits; names and language are
 * looked up when it is rendered, so that they are current.
 */
export interface SealedContent {
  code?: string;
  /** A path of the login UI (with its query); the instance's address is put before it when the message is rendered. */
  path?: string;
  /** Seconds the code or link lasts, for `{{.ExpiresIn}}`. */
  expiresInS: number;
}

export interface NewNotification {
  instanceId: string;
  orgId: string;
  userId: string;
  kind: MessageKind;
  channel: Channel;
  recipient: string;
  content: SealedContent;
  /** Past this the message is not sent any more (at most the code's expiry). */
  expiresAt: Date;
}

/**
 * Writes a message into the outbox, in the caller's transaction: it goes out when the
 * change that asks for it commits, and never when it rolls back. Workers of any process
 * send it (notifications/outbox/worker.ts). Returns its id.
 */
export async function recordNotification(tx: Tx, box: SecretBox, n: NewNotification): Promise<string> {
  const id = newId();
  const now = new Date();
  await tx
    .insertInto("notifications")
    .values({
      instance_id: n.instanceId,
      id,
      org_id: n.orgId,
      user_id: n.userId,
      kind: n.kind,
      channel: n.channel,
      recipient: n.recipient,
      status: "pending",
      next_attempt_at: now,
      sealed_data: box.encrypt(JSON.stringify(n.content)),
      created_at: now,
      expires_at: n.expiresAt,
    })
    .execute();
  return id;
}
