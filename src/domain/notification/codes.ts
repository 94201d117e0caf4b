import { createHmac, randomInt } from "node:crypto";
import { constantTimeEqual } from "../../crypto/equal.js";
import type { SecretBox } from "../../crypto/encryption.js";
import type { Tx } from "../../store/db.js";

/**
 * One-time codes that prove a person received a message: an email or phone verification, a
 * password reset, an invitation. Eight characters from an alphabet without look-alikes
 * (no 0/O, 1/I/L, 5/S, 2/Z, 8/B), about 37 bits: enough against guessing with at most
 * MAX_FAILED_ATTEMPTS tries per code. Stored as an HMAC under a key derived from the master
 * key: a copy of the table alone cannot be searched for the codes, as a plain hash of so
 * short a value could. A new code of a purpose replaces the old.
 */

const ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679";
const LENGTH = 8;
/** Wrong codes that invalidate the code (the issue's five). */
const MAX_FAILED_ATTEMPTS = 5;

export type CodePurpose = "verify_email" | "verify_phone" | "password_reset" | "invite" | "otp_email" | "otp_sms";

function newCode(): string {
  let code = "";
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** Spaces, dashes and case do not matter to a person copying a code. */
const normalized = (code: string) => code.replace(/[\s-]/g, "").toUpperCase();

function codeHash(box: SecretBox, instanceId: string, userId: string, code: string): string {
  return createHmac("sha256", box.derive("user-codes"))
    .update(`${instanceId}\n${userId}\n${normalized(code)}`)
    .digest("base64url");
}

export interface IssuedCode {
  code: string;
  expiresAt: Date;
}

/** A fresh code for the user and purpose, replacing any earlier one; `target` is what it proves (an address, a number). */
export async function issueCode(
  tx: Tx,
  box: SecretBox,
  c: { instanceId: string; userId: string; purpose: CodePurpose; target: string; ttlMs: number },
): Promise<IssuedCode> {
  const code = newCode();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + c.ttlMs);
  const row = { code_hash: codeHash(box, c.instanceId, c.userId, code), target: c.target, failed_attempts: 0, created_at: now, expires_at: expiresAt };
  await tx
    .insertInto("user_codes")
    .values({ instance_id: c.instanceId, user_id: c.userId, purpose: c.purpose, ...row })
    .onConflict((oc) => oc.columns(["instance_id", "user_id", "purpose"]).doUpdateSet(row))
    .execute();
  return { code, expiresAt };
}

/** Voids the user's code of a purpose (used, or replaced by another way of proving it). */
export async function voidCode(tx: Tx, instanceId: string, userId: string, purpose: CodePurpose): Promise<void> {
  await tx.deleteFrom("user_codes").where("instance_id", "=", instanceId).where("user_id", "=", userId).where("purpose", "=", purpose).execute();
}

/**
 * Checks a code, once: a right one (for this target, not expired) is consumed and answers
 * true; a wrong one counts, and the fifth voids the code. Whatever the reason a code is
 * refused (wrong, used, expired, voided, for another address) the answer is the same false:
 * the caller says "the code is not valid" and nothing more.
 */
export async function consumeCode(tx: Tx, box: SecretBox, c: CodeAnswer): Promise<boolean> {
  const right = await checkCode(tx, box, c);
  if (right) await right.use();
  return right !== undefined;
}

type CodeAnswer = { instanceId: string; userId: string; purpose: CodePurpose; target: string; code: string };

/**
 * consumeCode in two steps, for a check that takes several answers at once (a session's
 * codes): a wrong code counts at once, a right one is used up only by `use`, so that it stays
 * usable when another answer of the same check is wrong.
 */
export async function checkCode(tx: Tx, box: SecretBox, c: CodeAnswer): Promise<{ use(): Promise<void> } | undefined> {
  const row = await tx
    .selectFrom("user_codes")
    .selectAll()
    .where("instance_id", "=", c.instanceId)
    .where("user_id", "=", c.userId)
    .where("purpose", "=", c.purpose)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return undefined;
  const right = constantTimeEqual(codeHash(box, c.instanceId, c.userId, c.code.slice(0, 64)), row.code_hash);
  const usable = new Date(row.expires_at).getTime() > Date.now() && row.target === c.target;
  if (right && usable) return { use: () => voidCode(tx, c.instanceId, c.userId, c.purpose) };
  const failed = Number(row.failed_attempts) + 1;
  if (failed >= MAX_FAILED_ATTEMPTS || !usable) await voidCode(tx, c.instanceId, c.userId, c.purpose);
  else
    await tx
      .updateTable("user_codes")
      .set({ failed_attempts: failed })
      .where("instance_id", "=", c.instanceId)
      .where("user_id", "=", c.userId)
      .where("purpose", "=", c.purpose)
      .execute();
  return undefined;
}
