import { OAuthError, readForm } from "../../endpoints/oauth-response.js";
import type { PromptStep } from "../kit/context.js";
import { sameToken } from "../kit/form-token.js";
import { errorBody } from "../view/render.js";
import { emailCodeSubmit } from "./email-step.js";
import { mfaSetupSubmit } from "./mfa-setup.js";
import { newPasswordSubmit } from "./password-change-step.js";
import { secondFactorSubmit } from "./second-factor.js";
import { passkeySignInSubmit } from "./passkey-sign-in.js";
import { keySetupSubmit, passkeyOfferSubmit } from "./key-setup.js";
import { completeReset, forgotPasswordPage, requestReset } from "./forgot-password.js";
import { registerPage, registerSubmit } from "./register.js";
import { accountChooser, chooseAccount } from "./select-account.js";

/**
 * The steps of account selection, registration and password reset, before pages.ts's own:
 * the first page of a `select_account` or `create` interaction, "use another account"
 * (`/other`), the registration form (`/register`), the choice of a known account
 * (`/select`), "Forgot password?" (`/reset`, `/resetcode`), and the steps after the first
 * factor (sign-in.ts): the second factor (`/mfa`), setting one up (`/mfasetup`), a required
 * new password (`/newpassword`), the email code (`/verifyemail`), the passkey offer
 * (`/passkeyoffer`) and a key's registration (`/keysetup`); and the first page's passkey
 * (`/passkey`). False when the request is pages.ts's to answer.
 */
export async function promptSteps(s: PromptStep): Promise<boolean> {
  const { req, step, details } = s;
  if (req.method === "GET") {
    if (step === undefined && details.prompt.name === "select_account") return accountChooser(s).then(() => true);
    if ((step === undefined && details.prompt.name === "create") || step === "register") return registerPage(s).then(() => true);
    if (step === "other") return s.askLoginName(200, String(details.params.login_hint ?? "")).then(() => true);
    if (step === "reset") return (forgotPasswordPage(s), true);
    return false;
  }
  const submits: Record<string, (s: PromptStep, form: Record<string, string>) => Promise<void>> = {
    select: chooseAccount,
    register: registerSubmit,
    reset: requestReset,
    resetcode: completeReset,
    verifyemail: emailCodeSubmit,
    mfa: secondFactorSubmit,
    mfasetup: mfaSetupSubmit,
    newpassword: newPasswordSubmit,
    passkey: passkeySignInSubmit,
    passkeyoffer: passkeyOfferSubmit,
    keysetup: keySetupSubmit,
  };
  const submit = req.method === "POST" && step !== undefined ? submits[step] : undefined;
  if (!submit) return false;
  const form = await readCheckedForm(s);
  if (form) await submit(s, form);
  return true;
}

/** The posted form when its token is this interaction's; otherwise the error page is sent. */
async function readCheckedForm(s: PromptStep): Promise<Record<string, string> | undefined> {
  let form: Record<string, string>;
  try {
    form = await readForm(s.req, s.c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) {
      s.show(error.status, s.t.errorTitle, errorBody(s.t.formExpired));
      return undefined;
    }
    throw error;
  }
  if (!sameToken(form.csrf, s.csrf)) {
    s.show(403, s.t.errorTitle, errorBody(s.t.formExpired));
    return undefined;
  }
  return form;
}
