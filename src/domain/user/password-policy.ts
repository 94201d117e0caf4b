import type { InstanceRow } from "../../store/schema.js";
import { invalidArgument } from "../errors.js";

export type PasswordPolicyJson = NonNullable<InstanceRow["password_policy"]>;

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

/** One rule of a policy, for pages to say in their language. */
export type PasswordRule = { rule: "min_length"; length: number } | { rule: "uppercase" | "lowercase" | "number" | "symbol" };

/**
 * A policy's rules, each with its test: in code points for the length, so a password of
 * emoji is as long as it looks.
 */
function rulesOf(policy: PasswordPolicy): [PasswordRule, (password: string) => boolean][] {
  return [
    [{ rule: "min_length", length: policy.minLength }, (p) => [...p].length >= policy.minLength],
    ...(policy.requireUppercase ? [[{ rule: "uppercase" }, (p: string) => /\p{Lu}/u.test(p)] as const] : []),
    ...(policy.requireLowercase ? [[{ rule: "lowercase" }, (p: string) => /\p{Ll}/u.test(p)] as const] : []),
    ...(policy.requireNumber ? [[{ rule: "number" }, (p: string) => /\p{Nd}/u.test(p)] as const] : []),
    ...(policy.requireSymbol ? [[{ rule: "symbol" }, (p: string) => /[^\p{L}\p{Nd}]/u.test(p)] as const] : []),
  ] as [PasswordRule, (password: string) => boolean][];
}

/** Every rule of a policy: what the pages show beside a new password's field before anything is typed. */
export const passwordRules = (policy: PasswordPolicy): PasswordRule[] => rulesOf(policy).map(([rule]) => rule);

/** The rules a password breaks, all of them, not only the first. */
export const unmetRules = (password: string, policy: PasswordPolicy): PasswordRule[] =>
  rulesOf(policy)
    .filter(([, met]) => !met(password))
    .map(([rule]) => rule);

const ENGLISH: Record<PasswordRule["rule"], (rule: PasswordRule) => string> = {
  min_length: (r) => `at least ${(r as { length: number }).length} characters`,
  uppercase: () => "an uppercase letter",
  lowercase: () => "a lowercase letter",
  number: () => "a number",
  symbol: () => "a symbol",
};

/** Checks a new password and names every rule it breaks (InvalidArgument). */
export function checkPassword(password: string, policy: PasswordPolicy): void {
  const unmet = unmetRules(password, policy);
  if (unmet.length > 0) throw invalidArgument(`the password does not meet the password policy: it needs ${unmet.map((r) => ENGLISH[r.rule](r)).join(", ")}`);
}
