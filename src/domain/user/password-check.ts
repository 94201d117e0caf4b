import type { PasswordHasher } from "../../crypto/passwords.js";
import type { Tx } from "../../store/db.js";
import { recordFailedCheck } from "./lockout.js";
import type { LoginUser } from "./login-names.js";
import { checkStoredPassword } from "./passwords.js";

/** Where a failed check is counted: a transaction of its own, and word to every process when it locked the user. */
export interface FailedCheckStore {
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  accessChanged(): void;
}

export type SignInPasswordCheck = { ok: true; hash: string } | { ok: false; locked: boolean };

/**
 * A sign-in's password check, as the login pages and the sessions make it: against the hash
 * read with the user (login-names.ts), outside any transaction (hashing is slow on purpose).
 * A wrong or empty password counts toward the lockout, committed before the answer, which
 * says whether it locked the user; the lockout's bound is read only then.
 */
export async function checkSignInPassword(
  store: FailedCheckStore,
  hasher: PasswordHasher,
  instanceId: string,
  user: Pick<LoginUser, "id" | "password">,
  password: string | undefined,
  maxAttempts: () => Promise<number>,
): Promise<SignInPasswordCheck> {
  const checked = password ? await checkStoredPassword(hasher, user.password, password) : { ok: false as const };
  if (checked.ok) return checked;
  const max = await maxAttempts();
  const { locked } = await store.transact((tx) => recordFailedCheck(tx, instanceId, user.id, max));
  if (locked) store.accessChanged();
  return { ok: false, locked };
}
