import type { SecretBox } from "../../crypto/encryption.js";
import { checkCode } from "../notification/codes.js";
import type { Tx } from "../../store/db.js";
import { prepared } from "../../store/prepared.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor } from "../details.js";
import { failedPrecondition } from "../errors.js";
import { issueCodeMessage } from "../user/code-messages.js";
import { changeUser } from "../user/commands.js";
import { recordFailedCheck, clearFailedChecks } from "../user/lockout.js";
import type { VerificationSettings } from "../user/code-messages.js";
import type { CodeCheck } from "./model.js";
import { recoveryCodeHash } from "./recovery-codes.js";
import { totpStep } from "./totp.js";

/**
 * The one implementation of second-factor checks, for the login pages and the session API:
 * a TOTP code (each accepted once: its time step must be past the last accepted one), an
 * email or SMS code sent for the sign-in (one-time, to the verified address it went to), or
 * a recovery code (used once, and logged as `user.recovery_code.used`). A wrong answer
 * counts toward the same lockout as wrong passwords. Run in the transaction of the sign-in
 * step: the row locks make two checks of one code take turns.
 */

export interface CheckOutcome {
  ok: boolean;
  /** The wrong answer locked the user (the caller tells the caches at commit). */
  locked: boolean;
}

export async function checkSecondFactor(tx: Tx, box: SecretBox, user: UserRow, check: CodeCheck, code: string, maxAttempts: number): Promise<CheckOutcome> {
  const outcome = await checkSecondFactors(tx, box, user, [[check, code]], maxAttempts);
  return { ok: outcome.ok, locked: !outcome.ok && outcome.locked };
}

/**
 * Several answers of one check (a session's codes), all or nothing: the first wrong one ends
 * the check and counts, and then none of the right ones before it is used up (a right TOTP
 * beside a wrong email code keeps its time step for the next try); only when every answer is
 * right are they all used up.
 */
export async function checkSecondFactors(
  tx: Tx,
  box: SecretBox,
  user: UserRow,
  answers: [CodeCheck, string][],
  maxAttempts: number,
): Promise<{ ok: true } | ({ ok: false; wrong: CodeCheck } & CheckOutcome)> {
  const rights: RightAnswer[] = [];
  for (const [check, code] of answers) {
    const right = await rightAnswer(tx, box, user, check, code.slice(0, 64));
    if (!right) return { ok: false, wrong: check, ...(await recordFailedCheck(tx, user.instance_id, user.id, maxAttempts)) };
    rights.push(right);
  }
  for (const right of rights) await right.use();
  await clearFailedChecks(tx, user.instance_id, user.id);
  return { ok: true };
}

/** A right answer, not used up yet: `use` takes it (the TOTP's time step, the code, the recovery code). */
interface RightAnswer {
  use(): Promise<void>;
}

/* A TOTP sign-in is a PatchSession's hot path: its statements are prepared (store/prepared.ts). */
const totpLocked = prepared((db, p: { instanceId: string; userId: string }) =>
  db
    .selectFrom("user_factors")
    .select(["sealed_secret", "last_step"])
    .where("instance_id", "=", p.instanceId)
    .where("user_id", "=", p.userId)
    .where("type", "=", "totp")
    .where("state", "=", "ready")
    .forUpdate(),
);
const totpStepTaken = prepared((db, p: { instanceId: string; userId: string; step: number }) =>
  db.updateTable("user_factors").set({ last_step: p.step }).where("instance_id", "=", p.instanceId).where("user_id", "=", p.userId).where("type", "=", "totp"),
);

async function rightAnswer(tx: Tx, box: SecretBox, user: UserRow, check: CodeCheck, code: string): Promise<RightAnswer | undefined> {
  const { instance_id: instanceId, id: userId } = user;
  switch (check) {
    case "totp": {
      const [row] = await totpLocked(tx, { instanceId, userId });
      if (!row?.sealed_secret) return undefined;
      const step = totpStep(box.decrypt(row.sealed_secret), code);
      if (step === undefined || (row.last_step !== null && step <= Number(row.last_step))) return undefined;
      // The row is locked: the step is recorded with the transaction's next statement (store/deferred.ts).
      return { use: () => totpStepTaken.defer(tx, { instanceId, userId, step }) };
    }
    case "otp_email":
    case "otp_sms": {
      const target = check === "otp_email" ? user.email : user.phone;
      if (!target) return undefined;
      return checkCode(tx, box, { instanceId, userId, purpose: check, target, code });
    }
    case "recovery_code": {
      const codeHash = recoveryCodeHash(box, instanceId, userId, code);
      const unused = await tx
        .selectFrom("user_recovery_codes")
        .select("code_hash")
        .where("instance_id", "=", instanceId)
        .where("user_id", "=", userId)
        .where("code_hash", "=", codeHash)
        .where("used_at", "is", null)
        .forUpdate()
        .executeTakeFirst();
      if (!unused) return undefined;
      return {
        async use() {
          await tx
            .updateTable("user_recovery_codes")
            .set({ used_at: new Date() })
            .where("instance_id", "=", instanceId)
            .where("user_id", "=", userId)
            .where("code_hash", "=", codeHash)
            .execute();
          const current = await tx
            .selectFrom("users")
            .selectAll()
            .where("instance_id", "=", instanceId)
            .where("id", "=", userId)
            .forUpdate()
            .executeTakeFirstOrThrow();
          await changeUser(tx, { instanceId, userId }, current, [{ type: "user.recovery_code.used", payload: {} }], {});
        },
      };
    }
  }
}

/**
 * A one-time code for signing in, to the person's verified email address or phone number (a
 * new one replaces the last), or answered to the caller with `returnCode` (the session API,
 * for a login UI that delivers it). FailedPrecondition when the address or number is not
 * verified or the factor is not set up.
 */
export async function sendSignInCode(
  tx: Tx,
  s: VerificationSettings,
  actor: Actor,
  user: UserRow,
  type: "otp_email" | "otp_sms",
  returnCode = false,
): Promise<string | undefined> {
  const address = type === "otp_email" ? (user.email_verified ? user.email : null) : user.phone_verified ? user.phone : null;
  const factor = await tx
    .selectFrom("user_factors")
    .select("type")
    .where("instance_id", "=", user.instance_id)
    .where("user_id", "=", user.id)
    .where("type", "=", type)
    .executeTakeFirst();
  if (!address || !factor) throw failedPrecondition(`user ${user.id} cannot receive ${type === "otp_email" ? "email" : "SMS"} codes`);
  return issueCodeMessage(tx, s, { actor, user, purpose: type, kind: type, address, ttlMs: s.codeTtlMs.otp, returnCode });
}
