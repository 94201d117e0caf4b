import { ConnectError } from "@connectrpc/connect";
import { DomainError } from "../../domain/errors.js";
import { hashNewPassword, passwordPolicyOf } from "../../domain/user/passwords.js";
import type { LoginContext } from "./context.js";

/**
 * A new password's hash under the instance's policy, or why the policy refuses it (the
 * domain's message without its field prefix), for a form to show beside its own label.
 */
export async function hashUnderPolicy(c: Pick<LoginContext, "db" | "hasher" | "instanceId">, password: string): Promise<{ hash: string } | { refused: string }> {
  try {
    return { hash: await hashNewPassword(c.hasher, password, await passwordPolicyOf(c.db, c.instanceId)) };
  } catch (error) {
    const message = error instanceof DomainError && error.kind === "invalid_argument" ? error.message : error instanceof ConnectError ? error.rawMessage : undefined;
    if (message === undefined) throw error;
    return { refused: message.replace(/^[^:]*: /, "") };
  }
}
