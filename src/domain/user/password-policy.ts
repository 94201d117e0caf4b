import type { PasswordPolicyJson } from "../../store/schema.js";
import { invalidArgument } from "../errors.js";

/** Stored as JSON on the instance, exactly in this shape. */
export type PasswordPolicy = PasswordPolicyJson;

/** ZITADEL's usual default; each instance may set its own (PlatformInstances). */
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = {
  minLength: 8,
  requireUppercase: true,
  requireLowercase: true,
  requireNumber: true,
  requireSymbol: true,
};

/** Checks a new password and names every rule it breaks, not only the first. */
export function checkPassword(password: string, policy: PasswordPolicy): void {
  const unmet: string[] = [];
  // Length in code points: a password of emoji is as long as it looks.
  if ([...password].length < policy.minLength) unmet.push(`at least ${policy.minLength} characters`);
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) unmet.push("an uppercase letter");
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) unmet.push("a lowercase letter");
  if (policy.requireNumber && !/\p{Nd}/u.test(password)) unmet.push("a number");
  if (policy.requireSymbol && !/[^\p{L}\p{Nd}]/u.test(password)) unmet.push("a symbol");
  if (unmet.length > 0) throw invalidArgument(`the password does not meet the password policy: it needs ${unmet.join(", ")}`);
}
