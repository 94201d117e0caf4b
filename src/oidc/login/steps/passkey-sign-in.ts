import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { DomainError } from "../../../domain/errors.js";
import { loginUserById } from "../../../domain/user/login-names.js";
import { provesPerson, webAuthnAmr } from "../../../domain/user-webauthn/factor.js";
import { startWebAuthnCheck, verifyWebAuthnCheck } from "../../../domain/user-webauthn/sign-in.js";
import type { PromptStep, SignInStep } from "../kit/context.js";
import { webauthnScriptTag } from "../view/assets.js";
import { settingsOf } from "../kit/org-settings.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { alternatives, hiddenField } from "../view/render.js";
import type { Texts } from "../view/texts/index.js";
import { answerOf, keepChallenge, relyingPartyOf, takeChallenge } from "../kit/webauthn-challenges.js";
import { webauthnForm } from "../view/webauthn-form.js";
import { pageActor, recordSignIn } from "../kit/page-origin.js";
import { rowUser } from "../../../domain/audit/sign-ins.js";

/**
 * "Sign in with a passkey" on the first page (`/passkey`): no login name; the browser offers
 * the person's discoverable passkeys of this domain, and the one it answers with names the
 * user. Offered where the login's organization lets a passkey sign in alone
 * (`passwordless_type`); the user's own organization must allow it too, and the user must be
 * of the organization the scope restricts the login to, if any. The answer is checked by the
 * session API's check (domain/user-webauthn/sign-in.ts) against the challenge this
 * interaction's page was given; a user-verified passkey is two factors in one, so the
 * sign-in goes on (sign-in.ts) with `amr` `user` and `hwk`/`swk` and no second factor asked.
 */

/** The form for the first page, or nothing where passkeys may not sign in alone. Each showing gives the interaction a new challenge. */
export async function passkeySignInForm(s: Pick<SignInStep, "c" | "details" | "base" | "csrf" | "t">, loginOrgId: string): Promise<string> {
  if (!(await settingsOf(s.c, loginOrgId)).passwordlessAllowed) return "";
  let started;
  try {
    started = await startWebAuthnCheck(s.c.db, s.c.instanceId, { domain: relyingPartyOf(s.c), userVerification: "required" });
  } catch (error) {
    // Served on a host that is no domain of the instance (a proxy's name): passkeys of it would not work elsewhere.
    if (error instanceof DomainError) return "";
    throw error;
  }
  await keepChallenge(s, "signin", { pending: started.pending });
  return webauthnForm(s.t, {
    ceremony: "get",
    id: "passkey-sign-in",
    action: `${s.base}/passkey`,
    hidden: hiddenField("csrf", s.csrf),
    options: started.options,
    button: s.t.signInWithPasskey,
    secondary: true,
  });
}

/**
 * The first page's other ways in under its divider: the passkey form and the identity
 * providers' buttons. The passkey form shows only where the script finds WebAuthn; when it is
 * the only other way, the divider waits for it too.
 */
export function otherWaysIn(t: Texts, passkeyForm: string, externalButtons: string): string {
  // The script runs on the first page without a passkey form too: it tells the pages what the browser can do.
  if (!passkeyForm) return alternatives(t, externalButtons) + webauthnScriptTag();
  if (!externalButtons) return `<div data-webauthn-block hidden>${alternatives(t, passkeyForm)}</div>`;
  return alternatives(t, passkeyForm + externalButtons);
}

export async function passkeySignInSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "passkey")) return s.askLoginName(429, "", t.tooManyAttempts);
  const kept = await takeChallenge(s, "signin");
  const answer = answerOf<AuthenticationResponseJSON>(form);
  if (!kept || !answer) return s.askLoginName(400, "", t.webauthnInvalid);
  const checked = await c.transact((tx) => verifyWebAuthnCheck(tx, pageActor(s, "system"), c.guards.loginSettings, kept.pending, answer));
  if (!checked.ok) {
    recordSignIn(s, { method: "passkey", outcome: checked.refusal, ...(checked.user && { user: rowUser(checked.user) }) });
    // Only a copied key counts against its owner here (nobody else was named): it may lock.
    if (checked.locked) c.accessChanged();
    return s.askLoginName(400, "", t.webauthnInvalid);
  }
  const owner = rowUser(checked.user);
  const refuse = (status: number, outcome: "inactive" | "not_allowed", message: string) => {
    recordSignIn(s, { method: "passkey", outcome, user: owner });
    return s.askLoginName(status, "", message);
  };
  // A security key, or a passkey that did not verify the person, is one factor: no sign-in by itself.
  if (!provesPerson(checked.factor)) return refuse(400, "not_allowed", t.webauthnInvalid);
  // Found only in an active organization.
  const user = await loginUserById(c.db, c.instanceId, checked.user.id);
  if (!user) return refuse(403, "inactive", t.unknownUser);
  if (s.requestedOrg !== undefined && user.orgId !== s.requestedOrg) return refuse(403, "not_allowed", t.unknownUser);
  if (!(await settingsOf(c, user.orgId)).passwordlessAllowed) return refuse(403, "not_allowed", t.passkeyNotAllowed);
  recordSignIn(s, { method: "passkey", outcome: "succeeded", user: owner });
  await s.proceed({ userId: user.id, amr: webAuthnAmr(checked.factor) });
}
