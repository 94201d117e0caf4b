import { invalidArgument } from "./errors.js";

/**
 * What says where a resource kind's stored secret goes: the settings that aim it (the server
 * it is sent to, how, the account it opens), the secret's name, and the patch field that
 * gives it anew.
 */
export interface SecretAim {
  settings: readonly string[];
  secret: string;
  renewedBy: string;
}

/**
 * A stored secret is kept only for where it was given: a patch that changes a setting aiming
 * it, without giving the secret again, would send it where nobody gave it (to a server of
 * the patcher's choosing, or in the clear). Who may patch need not know the secret.
 */
export function requireSecretForNewAim(aim: SecretAim, before: object, after: object): void {
  const moved = aim.settings.find((setting) => valueOf(before, setting) !== valueOf(after, setting));
  if (moved)
    throw invalidArgument(
      `changing ${moved} needs ${aim.renewedBy} in the same patch: the stored ${aim.secret} is kept only for the ${moved} it was given for`,
    );
}

/** Compared as JSON: a list of servers given again in the same order is the same aim; absent, false and "" alike are unset. */
const valueOf = (settings: object, name: string): string => {
  const value = (settings as Record<string, unknown>)[name];
  return value === undefined || value === false || value === "" ? "" : JSON.stringify(value);
};
