import { pendingTotpSecret } from "../../../domain/user-factor/queries.js";
import { allowedAuthenticators } from "../../../domain/user-schema/users.js";
import { findUserRow } from "../../../domain/user/queries.js";
import { putOffSetUp } from "../../../domain/user/put-off-set-ups.js";
import QRCode from "qrcode";
import { DomainError } from "../../../domain/errors.js";
import type { LoginSettings } from "../../../domain/settings/login.js";
import { addOtp, addTotp, verifyTotp } from "../../../domain/user-factor/commands.js";
import { totpUri } from "../../../domain/user-factor/totp.js";
import { secondFactorChecked, secondFactorDue, vouchedForElsewhere } from "../../../domain/user-factor/due.js";
import type { SecondFactorType } from "../../../domain/user-factor/model.js";
import type { UserRow } from "../../../store/schema.js";
import type { PromptStep, SignInProgress, SignInStep } from "../kit/context.js";
import { signInSettingsOf } from "../kit/org-settings.js";
import { progressedUser, progressFields } from "../kit/progress.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { buttonForm, errorBody, escapeHtml, fieldError, form, hiddenField, inDuration, quietForm, type FormError } from "../view/render.js";
import { askSecondFactor, FACTOR_NAME } from "./second-factor.js";
import { askKeyRegistration } from "./key-setup.js";
import { webauthnCapability } from "../kit/webauthn-capability.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * Setting up a second factor during sign-in (`/mfasetup`), when the login settings force one
 * and the person has none: an authenticator app (a QR code drawn here as inline SVG, no
 * script or external image, with the key as text beside it), or codes by email or SMS to an
 * address or number already verified, or a security key or passkey (key-setup.ts, which
 * needs a browser with WebAuthn); "Skip for now" while `mfa_init_skip_lifetime` allows.
 * Setting one up proves it (the first code, the key's registration), so the sign-in goes on
 * with it checked.
 */

/**
 * The factors the person could set up here: the allowed second factors (codes only to a
 * verified address or number), and a passkey where `multi_factors` allows one; keys only in a
 * browser that showed WebAuthn (webauthn-capability.ts).
 */
async function offered(s: Pick<SignInStep, "req" | "c">, user: UserRow, settings: LoginSettings): Promise<(SecondFactorType | "passkey")[]> {
  // A schema user is offered only what its schema allows.
  const allowed = user.type === "schema" ? await allowedAuthenticators(s.c.db, user) : undefined;
  const allows = (f: SecondFactorType | "passkey") => !allowed || allowed.has(f === "u2f" || f === "passkey" ? "webauthn" : f);
  const webauthn = webauthnCapability(s.req) !== undefined;
  const factors = settings.secondFactors.filter(
    (f) => allows(f) && (f === "otp_email" ? user.email_verified === true : f === "otp_sms" ? user.phone_verified === true : f === "u2f" ? webauthn : true),
  );
  return webauthn && settings.multiFactors.includes("passkey") && allows("passkey") ? [...factors, "passkey"] : factors;
}

export async function askMfaSetup(s: SignInStep, p: SignInProgress, user: UserRow, settings: LoginSettings, status = 200, error?: string): Promise<void> {
  const { t } = s;
  const button = (value: string, label: string) => buttonForm(`${s.base}/mfasetup`, progressFields(s, p, "mfasetup") + hiddenField("setup", value), label);
  const choices = (await offered(s, user, settings)).map((f) => button(f, FACTOR_NAME[f](t)));
  const skip =
    settings.mfaInitSkipLifetimeMs > 0
      ? quietForm(
          `${s.base}/mfasetup`,
          progressFields(s, p, "mfasetup") + hiddenField("setup", "skip"),
          t.skipForNow,
          t.skipNote.replace("{when}", inDuration(s.lang, settings.mfaInitSkipLifetimeMs)),
        )
      : "";
  const none = choices.length === 0 ? errorBody(t.mfaSetupImpossible) : "";
  s.show(status, t.mfaSetupTitle, (error ? errorBody(error) : "") + `<p>${escapeHtml(t.mfaSetupIntro)}</p>${none}${choices.join("")}${skip}`);
}

/** The TOTP page: the QR code of the pending secret, the key as text, and the code field. */
async function askTotpCode(s: SignInStep, p: SignInProgress, uri: string, secret: string, status = 200, error?: FormError): Promise<void> {
  const { t } = s;
  const svg = await QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
  const key = secret.match(/.{1,4}/g)!.join(" ");
  s.show(
    status,
    t.mfaSetupTitle,
    form({
      action: `${s.base}/mfasetup`,
      hidden: progressFields(s, p, "mfasetup") + hiddenField("setup", "totp-verify"),
      intro:
        `<p>${escapeHtml(t.totpSetupIntro)}</p><figure class="qr" role="img" aria-label="${escapeHtml(t.totpQrLabel)}">${svg}</figure>` +
        `<p class="muted key">${escapeHtml(t.totpKey)}: <code id="totp-key">${escapeHtml(key)}</code></p>`,
      fields: [{ name: "code", label: t.code, autocomplete: "one-time-code", attrs: ' inputmode="numeric" pattern="[0-9 ]*"', autofocus: true }],
      submit: t.verify,
      ...(error && { error }),
    }) + buttonForm(`${s.base}/mfasetup`, progressFields(s, p, "mfasetup") + hiddenField("setup", "choose"), t.chooseAnotherWay),
  );
}

export async function mfaSetupSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const at = await progressedUser(s, form, "mfasetup");
  if (!at) return;
  const { p, user } = at;
  const settings = await signInSettingsOf(s, user.org_id);
  // Only while a set-up is due: the step's proof alone does not make it so (a factor set up
  // meanwhile, in another tab, leaves nothing to set up here).
  if (secondFactorChecked(p.amr) || !(await secondFactorDue(c.db, user, settings, vouchedForElsewhere(p.amr))).setUp) return s.proceed(p);
  const actor = pageActor(s, user.id);
  const setup = form.setup ?? "";
  if (setup === "skip") {
    if (settings.mfaInitSkipLifetimeMs === 0) return askMfaSetup(s, p, user, settings, 400, t.formExpired);
    await c.transact((tx) => putOffSetUp(tx, actor, user.id, "secondFactor"));
    return s.proceed(p);
  }
  if (setup === "choose") return askMfaSetup(s, p, user, settings);
  if (setup === "totp-verify") {
    if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "code")) return askMfaSetup(s, p, user, settings, 429, t.tooManyAttempts);
    const secret = await pendingTotpSecret(c.db, c.codes.box, c.instanceId, user.id);
    if (secret === undefined) return askMfaSetup(s, p, user, settings, 400, t.formExpired);
    const verified = await c.transact((tx) => verifyTotp(tx, actor, c.codes.box, user.id, form.code ?? "")).catch(ignoreDomainError);
    if (!verified) return askTotpCode(s, p, totpUri(secret, s.look.instanceName, user.username), secret, 400, fieldError("code", t.codeInvalid));
    return s.proceed({ ...p, amr: [...p.amr, "otp"] });
  }
  const factor = (await offered(s, user, settings)).find((f) => f === setup);
  if (!factor) return askMfaSetup(s, p, user, settings, 400, t.formExpired);
  if (factor === "totp") {
    const issuer = s.look.instanceName;
    const added = await c.transact((tx) => addTotp(tx, actor, c.codes.box, user.id, issuer)).catch(ignoreDomainError);
    // A TOTP verified meanwhile (in another tab): the second-factor step asks for its code.
    if (!added) return s.proceed(p);
    return askTotpCode(s, p, added.uri, added.secret);
  }
  if (factor === "u2f" || factor === "passkey") return askKeyRegistration(s, p, user, factor, true);
  await c.transact((tx) => addOtp(tx, actor, user.id, factor)).catch(ignoreDomainError);
  return askSecondFactor(s, p, (await findUserRow(c.db, c.instanceId, user.id)) ?? user, factor, true);
}

/** A refused change (already set up, no longer verified): the page that follows says what holds now. */
function ignoreDomainError(error: unknown): undefined {
  if (error instanceof DomainError) return undefined;
  throw error;
}
