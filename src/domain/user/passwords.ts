import { checkImportableHash, PasswordHashFormatError, type PasswordHasher } from "../../crypto/passwords.js";
import type { Db } from "../../store/db.js";
import { invalidArgument } from "../errors.js";
import type { StoredPassword } from "./login-names.js";
import { checkPassword, DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "./password-policy.js";

/** The hash to store for a new password in clear text, after the instance's policy allowed it. */
export async function hashNewPassword(hasher: PasswordHasher, password: string, policy: PasswordPolicy): Promise<string> {
  checkPassword(password, policy);
  return hasher.hash(password);
}

/** The instance's password policy, or the default one where it has none. */
export async function passwordPolicyOf(db: Db, instanceId: string): Promise<PasswordPolicy> {
  const row = await db.selectFrom("instances").select("password_policy").where("instance_id", "=", instanceId).where("id", "=", instanceId).executeTakeFirst();
  return row?.password_policy ?? DEFAULT_PASSWORD_POLICY;
}

/** An imported hash is stored as it is, once we know we can verify it. */
export function importedHash(encoded: string): string {
  try {
    checkImportableHash(encoded);
  } catch (error) {
    if (error instanceof PasswordHashFormatError) throw invalidArgument(`hashed_password: ${error.message}`);
    throw error;
  }
  return encoded;
}

/** Checks a user's password without touching it: for changing it, when it is replaced anyway. */
export async function checkCurrentPassword(db: Db, hasher: PasswordHasher, instanceId: string, userId: string, password: string): Promise<PasswordCheck> {
  const row = await db
    .selectFrom("user_secrets")
    .select("hash")
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", "password")
    .executeTakeFirst();
  return checkStoredPassword(hasher, row, password);
}

export type PasswordCheck = { ok: false } | { ok: true; hash: string };

/** Checks a password against the hash read with its user (domain/user/login-names.ts). */
export async function checkStoredPassword(hasher: PasswordHasher, stored: StoredPassword | undefined, password: string): Promise<PasswordCheck> {
  if (stored === undefined || !(await hasher.verify(stored.hash, password)).ok) return { ok: false };
  return { ok: true, hash: stored.hash };
}

/**
 * The user's password without its hash, if it has one: when it was last set (by anyone: itself,
 * an administrator, a reset) and whether the user must choose a new one.
 */
export async function passwordState(db: Db, instanceId: string, userId: string): Promise<{ changedAt: Date; changeRequired: boolean } | undefined> {
  const row = await db
    .selectFrom("user_secrets")
    .select(["changed_at", "change_required"])
    .where("instance_id", "=", instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", "password")
    .executeTakeFirst();
  return row && { changedAt: new Date(row.changed_at), changeRequired: row.change_required };
}

export async function passwordChangedAt(db: Db, instanceId: string, userId: string): Promise<Date | undefined> {
  return (await passwordState(db, instanceId, userId))?.changedAt;
}

/**
 * Whether a sign-in the password proved (`amr` holds `pwd`) at `authTime` (seconds) was
 * outlived by a change of the password: it then counts for nothing, in a browser's single
 * sign-on as for the refresh tokens it gave (docs/oidc.md, "A password change"). Compared in
 * whole seconds, as sign-ins are timed: the new password a sign-in's own step sets does not
 * end that sign-in.
 */
export function outlivedByPassword(amr: readonly string[] | undefined, authTime: number | undefined, changedAt: Date | undefined): boolean {
  return amr?.includes("pwd") === true && authTime !== undefined && changedAt !== undefined && Math.floor(changedAt.getTime() / 1000) > authTime;
}
