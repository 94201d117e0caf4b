import { passwordPolicyOf } from "../../../domain/user/passwords.js";
import { passwordRules, unmetRules, type PasswordPolicy, type PasswordRule } from "../../../domain/user/password-policy.js";
import type { LoginContext } from "./context.js";
import { fieldError, type FieldError } from "../view/render.js";
import type { Language, Texts } from "../view/texts/index.js";

/**
 * A password chosen on a form, typed twice: its hash under the instance's policy, or the
 * error the form shows next to the field it concerns (`fields`: the form's names of the
 * password and its confirmation): the two differ, or the policy's rules it breaks, in the
 * page's language after the form's own label.
 */
export async function chosenPassword(
  c: Pick<LoginContext, "db" | "hasher" | "instanceId">,
  page: { t: Texts; lang: Language },
  password: string,
  confirmation: string | undefined,
  fields: [password: string, confirmation: string] = ["password", "passwordConfirmation"],
): Promise<{ hash: string } | { error: FieldError }> {
  const { t } = page;
  if (password !== confirmation) return { error: fieldError(fields[1], t.passwordsDiffer) };
  const unmet = unmetRules(password, await passwordPolicyOf(c.db, c.instanceId));
  if (unmet.length > 0) return { error: fieldError(fields[0], `${t.passwordPolicy} ${t.passwordNeeds.replace("{rules}", rulesText(page, unmet))}`) };
  return { hash: await c.hasher.hash(password) };
}

/** What a new password's field says under it before anything is typed: every rule of the policy. */
export function passwordHint(page: { t: Texts; lang: Language }, policy: PasswordPolicy): string {
  return page.t.passwordHint.replace("{rules}", rulesText(page, passwordRules(policy)));
}

const RULE_TEXT: Record<PasswordRule["rule"], (t: Texts, rule: PasswordRule) => string> = {
  min_length: (t, r) => t.ruleMinLength.replace("{n}", String((r as { length: number }).length)),
  uppercase: (t) => t.ruleUppercase,
  lowercase: (t) => t.ruleLowercase,
  number: (t) => t.ruleNumber,
  symbol: (t) => t.ruleSymbol,
};

function rulesText(page: { t: Texts; lang: Language }, rules: PasswordRule[]): string {
  return new Intl.ListFormat(page.lang, { type: "conjunction" }).format(rules.map((r) => RULE_TEXT[r.rule](page.t, r)));
}
