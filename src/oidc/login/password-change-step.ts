import { storePassword } from "../../domain/user/commands.js";
import { findUserRow } from "../../domain/user/queries.js";
import type { Db } from "../../store/eventstore.js";
import type { PromptStep, SignInProgress, SignInStep } from "./context.js";
import { chosenPassword } from "./new-password.js";
import { progressFields, progressOf } from "./progress.js";
import { errorBody, escapeHtml } from "./render.js";

/**
 * The new password a person must choose (`change_required`, set by an administrator), asked
 * after every factor the sign-in needs (sign-in.ts): whoever knows only the password cannot
 * change it to lock the person out of an account a second factor protects.
 */

export async function passwordChangeRequired(db: Db, instanceId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom("user_secrets").select("change_required").where("instance_id", "=", instanceId).where("user_id", "=", userId).where("kind", "=", "password").executeTakeFirst();
  return row?.change_required ?? false;
}

export function askNewPassword(s: SignInStep, p: SignInProgress, status = 200, error?: string): void {
  const { t } = s;
  const field = (id: string, label: string) =>
    `<label for="${id}">${escapeHtml(label)}</label><input id="${id}" name="${id}" type="password" autocomplete="new-password" required>`;
  s.show(
    status,
    t.changePasswordTitle,
    (error ? errorBody(error) : "") +
      `<form method="post" action="${escapeHtml(`${s.base}/newpassword`)}">${progressFields(s, p, "newpassword")}` +
      field("newPassword", t.newPassword) +
      field("newPasswordConfirmation", t.confirmPassword) +
      `<button type="submit">${escapeHtml(t.changePassword)}</button></form>`,
  );
}

export async function newPasswordSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const p = progressOf(s, form, "newpassword");
  const user = p && (await findUserRow(c.db, c.instanceId, p.userId));
  if (!p || !user) return s.show(403, t.errorTitle, errorBody(t.formExpired));
  if (user.state !== "active") return s.askLoginName(403, "", t.userLocked);
  if (!(await passwordChangeRequired(c.db, c.instanceId, user.id))) return s.proceed(p);
  const chosen = await chosenPassword(c, t, form.newPassword ?? "", form.newPasswordConfirmation);
  if ("error" in chosen) return askNewPassword(s, p, 400, chosen.error);
  await c.transact((tx) => storePassword(tx, { instanceId: c.instanceId, userId: user.id }, user.id, { hash: chosen.hash, changeRequired: false }));
  await s.proceed(p);
}
