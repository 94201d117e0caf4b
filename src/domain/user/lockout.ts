import { changeUserState } from "./commands.js";
import type { Db, Tx } from "../../store/db.js";
import { prepared } from "../../store/prepared.js";
import { noticeAccessChange } from "../../store/access-notice.js";

/**
 * Counts a failed check of a password or a second factor (one counter, on the user, whatever
 * factors it has: the login settings' `max_password_attempts` bounds them together, and a
 * person without a password is locked by wrong codes as anyone else); at `max` (0: never)
 * the user is locked (`user.locked`, by the system) and the count starts again, so that an
 * administrator's unlock gives the full number of attempts back. Locking changes access:
 * every process hears of it at commit.
 */
export async function recordFailedCheck(tx: Tx, instanceId: string, userId: string, max: number): Promise<{ locked: boolean }> {
  const row = await tx
    .updateTable("users")
    .set((eb) => ({ failed_checks: eb("failed_checks", "+", 1) }))
    .where("instance_id", "=", instanceId)
    .where("id", "=", userId)
    .returning("failed_checks")
    .executeTakeFirst();
  if (max === 0 || !row || row.failed_checks < max) return { locked: false };
  await tx.updateTable("users").set({ failed_checks: 0 }).where("instance_id", "=", instanceId).where("id", "=", userId).execute();
  await changeUserState(tx, { instanceId, userId: "system" }, userId, "lock");
  await noticeAccessChange(tx);
  return { locked: true };
}

/** A successful check clears the count (writing only when there is one). */
export function clearFailedChecks(db: Db, instanceId: string, userId: string): Promise<void> {
  // In a transaction it goes with the next statement (store/deferred.ts): a sign-in reads nothing back.
  return failedChecksCleared.defer(db, { instanceId, userId });
}

const failedChecksCleared = prepared((db, p: { instanceId: string; userId: string }) =>
  db.updateTable("users").set({ failed_checks: 0 }).where("instance_id", "=", p.instanceId).where("id", "=", p.userId).where("failed_checks", ">", 0),
);
