import { webAuthnDeviceType } from "../../../domain/user-webauthn/queries.js";
import { schemaAllows } from "../../../domain/user-schema/users.js";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { DomainError } from "../../../domain/errors.js";
import type { LoginSettings } from "../../../domain/settings/login.js";
import { secondFactorChecked, secondFactorDue, vouchedForElsewhere } from "../../../domain/user-factor/due.js";
import { usableFactors } from "../../../domain/user-factor/queries.js";
import { webAuthnAmr, type WebAuthnKind } from "../../../domain/user-webauthn/factor.js";
import { finishRegistration, removeWebAuthnKey, startRegistration } from "../../../domain/user-webauthn/registration.js";
import { putOffSetUp } from "../../../domain/user/put-off-set-ups.js";
import type { UserRow } from "../../../store/schema.js";
import type { PromptStep, SignInProgress, SignInStep } from "../kit/context.js";
import { signInSettingsOf } from "../kit/org-settings.js";
import { progressedUser, progressFields } from "../kit/progress.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { buttonForm, errorBody, escapeHtml, hiddenField, quietForm } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { webauthnCapability } from "../kit/webauthn-capability.js";
import { answerOf, keepChallenge, relyingPartyOf, takeChallenge, type RegistrationRecord } from "../kit/webauthn-challenges.js";
import { webauthnForm } from "../view/webauthn-form.js";
import { pageActor } from "../kit/page-origin.js";

/**
 * Setting up a passkey or security key on the pages, with the registration of the
 * PlatformUsers API (domain/user-webauthn/registration.ts):
 * - offered after a password sign-in: where passkeys may sign in alone (`passwordless_type`),
 *   to a person without one whose browser has an authenticator of its own
 *   (webauthn-capability.ts), once every factor the sign-in needs is checked: the registration
 *   page itself, with "Not now" (`/passkeyoffer`). "Not now" is remembered on the user
 *   (`passkey_prompt_skipped_at`) for the organization's `mfa_init_skip_lifetime`, the
 *   lifetime the settings give any put-off set-up (30 days by default; with 0, for this
 *   sign-in only), so the offer does not come back at every sign-in;
 * - as the set-up of a second factor the login settings force (mfa-setup.ts): a passkey
 *   where `multi_factors` allows one, a security key where `second_factors` does.
 * The registration page (`/keysetup`) asks the browser to create the credential; the
 * pending registration is kept for this interaction on the server (webauthn-challenges.ts)
 * and taken by the answer. Setting a key up proves it (as a TOTP's first code does): the
 * sign-in goes on with it checked (else a person who just made a passkey would be asked for it
 * at once, as a passkey is asked for after a password where `multi_factors` allows one).
 */

/**
 * Whether the offer is to be made (`asking`: whether to make it now, to a browser with an
 * authenticator of its own, unless put off) or may still be answered (`asking` false: the
 * person answers the offer it got).
 */
export async function passkeyOfferDue(
  s: Pick<SignInStep, "c" | "req">,
  user: UserRow,
  settings: LoginSettings,
  p: SignInProgress,
  asking = true,
): Promise<boolean> {
  const { c } = s;
  if (!p.amr.includes("pwd") || !settings.passwordlessAllowed || p.passkeyOffered) return false;
  if (user.type === "schema" && !(await schemaAllows(c.db, user, "webauthn"))) return false;
  if (asking && webauthnCapability(s.req) !== "platform") return false;
  if (asking && user.passkey_prompt_skipped_at && Date.now() - new Date(user.passkey_prompt_skipped_at).getTime() < settings.mfaInitSkipLifetimeMs)
    return false;
  // Past every factor the sign-in needs: the password alone must not add a way in.
  const due = await secondFactorDue(c.db, user, settings, false);
  if ((due.ask || due.setUp) && !secondFactorChecked(p.amr)) return false;
  return !(await usableFactors(c.db, user)).passkey;
}

/** "Not now" (the offer's one button besides setting up); the sign-in then goes on. */
export async function passkeyOfferSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const at = await progressedUser(s, form, "passkeyoffer");
  if (!at) return;
  const { p, user } = at;
  const settings = await signInSettingsOf(s, user.org_id);
  if (!(await passkeyOfferDue(s, user, settings, p, false))) return s.proceed(p);
  if (form.choice !== "skip") return askKeyRegistration(s, p, user, "passkey", false, 400, t.formExpired);
  await c.transact((tx) => putOffSetUp(tx, pageActor(s, user.id), user.id, "passkey"));
  // The offer started a registration: "Not now" leaves no pending passkey behind.
  const kept = await takeChallenge(s, "register");
  if (kept && kept.userId === user.id && kept.kind === "passkey") {
    await c
      .transact((tx) => removeWebAuthnKey(tx, pageActor(s, user.id), user.id, "passkey", kept.keyId, undefined))
      .catch((e: unknown) => {
        if (!(e instanceof DomainError)) throw e;
      });
  }
  return s.proceed({ ...p, passkeyOffered: true });
}

const SETUP_INTRO: Record<WebAuthnKind, (t: Texts) => string> = { passkey: (t) => t.passkeyCreateIntro, u2f: (t) => t.securityKeyCreateIntro };
const SETUP_BUTTON: Record<WebAuthnKind, (t: Texts) => string> = { passkey: (t) => t.setUpPasskey, u2f: (t) => t.setUpSecurityKey };
const KEY_NAME: Record<WebAuthnKind, (t: Texts) => string> = { passkey: (t) => t.factorPasskey, u2f: (t) => t.factorSecurityKey };

/**
 * Starts a registration of a `kind` credential for the person and shows its page, with the
 * way back: the other factors of a forced set-up, or "Not now" of the offer. The offer after a
 * password sign-in is this page itself, one screen: why (`passkeyOfferIntro`), the button that
 * makes the passkey, and "Not now".
 */
export async function askKeyRegistration(
  s: SignInStep,
  p: SignInProgress,
  user: UserRow,
  kind: WebAuthnKind,
  forced: boolean,
  status = 200,
  error?: string,
): Promise<void> {
  const { c, t } = s;
  const title = forced ? t.mfaSetupTitle : t.passkeyOfferTitle;
  let started;
  try {
    started = await c.transact(async (tx) =>
      startRegistration(tx, pageActor(s, user.id), user.id, kind, { domain: relyingPartyOf(c), rpName: s.look.instanceName, attachment: undefined }),
    );
  } catch (e) {
    // Served on a host that is no domain of the instance: no credential could be made for it.
    if (!(e instanceof DomainError)) throw e;
    return s.show(400, title, errorBody(t.webauthnRegistrationFailed));
  }
  await keepChallenge(s, "register", { userId: user.id, kind, keyId: started.id, forced });
  const back = forced
    ? buttonForm(`${s.base}/mfasetup`, progressFields(s, p, "mfasetup") + hiddenField("setup", "choose"), t.chooseAnotherWay)
    : quietForm(`${s.base}/passkeyoffer`, progressFields(s, p, "passkeyoffer") + hiddenField("choice", "skip"), t.notNow);
  s.show(
    status,
    title,
    (error ? errorBody(error) : "") +
      (forced ? "" : `<p>${escapeHtml(t.passkeyOfferIntro)}</p>`) +
      `<p>${escapeHtml(SETUP_INTRO[kind](t))}</p>` +
      webauthnForm(t, {
        ceremony: "create",
        id: "key-setup",
        action: `${s.base}/keysetup`,
        hidden: progressFields(s, p, "keysetup"),
        options: started.options,
        button: SETUP_BUTTON[kind](t),
        explain: true,
      }) +
      back,
  );
}

/** Whether the registration kept for this interaction may still be finished: the reason it was offered holds. */
async function stillDue(s: SignInStep, user: UserRow, p: SignInProgress, kept: RegistrationRecord): Promise<boolean> {
  const { c } = s;
  const settings = await signInSettingsOf(s, user.org_id);
  if (!kept.forced) return kept.kind === "passkey" && passkeyOfferDue(s, user, settings, p, false);
  const allowed = kept.kind === "passkey" ? settings.multiFactors.includes("passkey") : settings.secondFactors.includes("u2f");
  return allowed && !secondFactorChecked(p.amr) && (await secondFactorDue(c.db, user, settings, vouchedForElsewhere(p.amr))).setUp;
}

/** The browser's new credential: registered, and the sign-in goes on. */
export async function keySetupSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const at = await progressedUser(s, form, "keysetup");
  if (!at) return;
  const { p, user } = at;
  const kept = await takeChallenge(s, "register");
  // Nothing (left) to finish, or set up meanwhile: the sign-in's next step says what holds now.
  if (!kept || kept.userId !== user.id || !(await stillDue(s, user, p, kept))) return s.proceed(p);
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "keysetup"))
    return askKeyRegistration(s, p, user, kept.kind, kept.forced, 429, t.tooManyAttempts);
  const answer = answerOf<RegistrationResponseJSON>(form);
  const name = `${KEY_NAME[kept.kind](t)} ${new Date().toISOString().slice(0, 10)}`;
  const registered =
    answer !== undefined &&
    (await c
      .transact((tx) => finishRegistration(tx, pageActor(s, user.id), user.id, kept.kind, kept.keyId, answer, name))
      .then(
        () => true,
        (e: unknown) => {
          // An answer that does not verify (another challenge, origin or relying party), or a credential registered already.
          if (e instanceof DomainError) return false;
          throw e;
        },
      ));
  if (!registered) return askKeyRegistration(s, p, user, kept.kind, kept.forced, 400, t.webauthnRegistrationFailed);
  const deviceType = (await webAuthnDeviceType(c.db, c.instanceId, kept.keyId)) ?? "singleDevice";
  // A passkey is registered only with user verification (registration.ts).
  const amr = webAuthnAmr({ kind: kept.kind, userVerified: kept.kind === "passkey", deviceType });
  await s.proceed({ ...p, amr: [...p.amr, ...amr], passkeyOffered: true });
}
