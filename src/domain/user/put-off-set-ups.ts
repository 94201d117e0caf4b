import type { Tx } from "../../store/db.js";
import type { Actor, ObjectDetails } from "../details.js";
import { changeUser, userRowForUpdate } from "./commands.js";

/**
 * The set-ups the login pages offer and a person may put off: a second factor ("Skip for
 * now", user-factor/due.ts) and a passkey ("Not now", oidc/login/steps/key-setup.ts). The answer
 * is kept on the user, each its own event, and honoured for the organization's
 * `mfaInitSkipLifetime`.
 */
const PUT_OFF = {
  secondFactor: { event: "user.mfa_init.skipped", column: "mfa_init_skipped_at" },
  passkey: { event: "user.passkey_prompt.skipped", column: "passkey_prompt_skipped_at" },
} as const;

export type PutOffSetUp = keyof typeof PUT_OFF;

export async function putOffSetUp(tx: Tx, actor: Actor, userId: string, setUp: PutOffSetUp): Promise<ObjectDetails> {
  const { event, column } = PUT_OFF[setUp];
  const current = await userRowForUpdate(tx, actor.instanceId, userId);
  return changeUser(tx, actor, current, [{ type: event, payload: {} }], { [column]: new Date() });
}
