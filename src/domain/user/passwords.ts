import { checkImportableHash, PasswordHashFormatError, type PasswordHasher } from "../../crypto/passwords.js";
import type { Db, Tx } from "../../store/eventstore.js";
import type { Actor } from "../details.js";
import { DomainError, invalidArgument } from "../errors.js";
import { passwordHash, storePassword } from "./commands.js";
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

/**
 * Checks a user's password. After a match with a hash weaker than the configured Argon2id
 * (an imported bcrypt, scrypt or argon2i hash, or older parameters), the password is hashed
 * again and stored, unless it changed meanwhile. Returns the hash that matched.
 */
export async function verifyPassword(
  db: Db,
  transact: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>,
  hasher: PasswordHasher,
  actor: Actor,
  userId: string,
  password: string,
): Promise<{ ok: false } | { ok: true; hash: string }> {
  const hash = await passwordHash(db, actor.instanceId, userId);
  if (hash === undefined) return { ok: false };
  const result = await hasher.verify(hash, password);
  if (!result.ok) return { ok: false };
  if (!result.needsRehash) return { ok: true, hash };
  const fresh = await hasher.hash(password);
  try {
    await transact((tx) => storePassword(tx, actor, userId, { hash: fresh, changeRequired: "keep", expected: hash, event: "user.password.rehashed" }));
  } catch (error) {
    // Changed meanwhile: the newer password stands, and this one still matched when checked.
    if (error instanceof DomainError && error.kind === "failed_precondition") return { ok: true, hash };
    throw error;
  }
  return { ok: true, hash: fresh };
}
