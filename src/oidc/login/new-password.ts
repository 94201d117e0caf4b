import { ConnectError } from "@connectrpc/connect";
import { DomainError } from "../../domain/errors.js";
import { hashNewPassword, passwordPolicyOf } from "../../domain/user/passwords.js";
import type { LoginContext } from "./context.js";
import { fieldError, type FieldError } from "./render.js";
import type { Texts } from "./texts/index.js";

/**
 * A password chosen on a form, typed twice: its hash under the instance's policy, or the
 * error the form shows next to the field it concerns (`fields`: the form's names of the
 * password and its confirmation): the two differ, or the policy's words after the form's
 * own label.
 */
export async function chosenPassword(
  c: Pick<LoginContext, "db" | "hasher" | "instanceId">,
  t: Texts,
  password: string,
  confirmation: string | undefined,
  fields: [password: string, confirmation: string] = ["password", "passwordConfirmation"],
): Promise<{ hash: string } | { error: FieldError }> {
  if (password !== confirmation) return { error: fieldError(fields[1], t.passwordsDiffer) };
  const hashed = await hashUnderPolicy(c, password);
  return "refused" in hashed ? { error: fieldError(fields[0], `${t.passwordPolicy} ${hashed.refused}`) } : hashed;
}

/** A new password's hash under the instance's policy, or why the policy refuses it (the domain's message without its field prefix). */
async function hashUnderPolicy(c: Pick<LoginContext, "db" | "hasher" | "instanceId">, password: string): Promise<{ hash: string } | { refused: string }> {
  try {
    return { hash: await hashNewPassword(c.hasher, password, await passwordPolicyOf(c.db, c.instanceId)) };
  } catch (error) {
    const message = error instanceof DomainError && error.kind === "invalid_argument" ? error.message : error instanceof ConnectError ? error.rawMessage : undefined;
    if (message === undefined) throw error;
    return { refused: message.replace(/^[^:]*: /, "") };
  }
}
