import { passwordState } from "../../../domain/user/passwords.js";
import { storePassword } from "../../../domain/user/commands.js";
import type { Db } from "../../../store/db.js";
import type { PromptStep, SignInProgress, SignInStep } from "../kit/context.js";
import { chosenPassword } from "../kit/new-password.js";
import { progressedUser, progressFields } from "../kit/progress.js";
import { form, type FormError } from "../view/render.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * The new password a person must choose (`change_required`, set by an administrator), asked
 * after every factor the sign-in needs (sign-in.ts): whoever knows only the password cannot
 * change it to lock the person out of an account a second factor protects.
 */

export async function passwordChangeRequired(db: Db, instanceId: string, userId: string): Promise<boolean> {
  return (await passwordState(db, instanceId, userId))?.changeRequired ?? false;
}

export function askNewPassword(s: SignInStep, p: SignInProgress, status = 200, error?: FormError): void {
  const { t } = s;
  s.show(
    status,
    t.changePasswordTitle,
    form({
      action: `${s.base}/newpassword`,
      hidden: progressFields(s, p, "newpassword"),
      fields: [
        { name: "newPassword", label: t.newPassword, type: "password", autocomplete: "new-password", autofocus: true },
        { name: "newPasswordConfirmation", label: t.confirmPassword, type: "password", autocomplete: "new-password" },
      ],
      submit: t.changePassword,
      ...(error && { error }),
    }),
  );
}

export async function newPasswordSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c } = s;
  const at = await progressedUser(s, form, "newpassword");
  if (!at) return;
  const { p, user } = at;
  if (!(await passwordChangeRequired(c.db, c.instanceId, user.id))) return s.proceed(p);
  const chosen = await chosenPassword(c, s, form.newPassword ?? "", form.newPasswordConfirmation, ["newPassword", "newPasswordConfirmation"]);
  if ("error" in chosen) return askNewPassword(s, p, 400, chosen.error);
  await c.transact((tx) => storePassword(tx, pageActor(s, user.id), user.id, { hash: chosen.hash, changeRequired: false }));
  // The new password is this sign-in's password check from now on: timed before the change,
  // the sign-in would be one the change outlived (outlivedByPassword) and its code refused.
  await s.proceed({ ...p, first: Math.floor(Date.now() / 1000) });
}
