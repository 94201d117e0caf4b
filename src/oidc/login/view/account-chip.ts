import { loginUserById } from "../../../domain/user/login-names.js";
import type { SignInStep } from "../kit/context.js";
import { escapeHtml, links, shownLoginName } from "./render.js";

/**
 * Whose sign-in a step is, as the password page shows it (the login name, or the username
 * where the branding hides the suffix), and the way out of it: every step after the first
 * factor says whose account it asks about and lets the person use another.
 */
export async function accountChip(s: Pick<SignInStep, "c" | "look">, userId: string): Promise<string> {
  const user = await loginUserById(s.c.db, s.c.instanceId, userId);
  return user ? `<p class="account">${escapeHtml(shownLoginName(s.look, user.loginName, user.row.username))}</p>` : "";
}

/** "Use another account": the interaction's first page again. */
export const otherAccountLink = (s: Pick<SignInStep, "base" | "t">) => links([[`${s.base}/other`, s.t.otherAccount]]);
