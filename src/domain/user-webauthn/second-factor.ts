import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { Db, Tx } from "../../store/db.js";
import type { UserRow } from "../../store/schema.js";
import type { SettingsKind } from "../settings/kind.js";
import type { LoginSettings } from "../settings/login.js";
import type { UserVerification } from "./authentication.js";
import { provesSecondFactor } from "./factor.js";
import { startWebAuthnCheck, verifyWebAuthnCheck, type PendingWebAuthn, type WebAuthnCheck } from "./sign-in.js";

/**
 * A security key (or a passkey) as the second factor after a password, for the login pages'
 * second-factor step; the session API does the same with challenges.webAuthN and
 * checks.webAuthN, and FinalizeAuthRequest applies the same rule (factor.ts).
 */

/**
 * A challenge for the keys of a known user on `domain` (one of the instance's, else
 * InvalidArgument): its credentials of either kind. User verification is not asked where
 * security keys are allowed (the key proves possession; the password was the knowledge), and
 * required where only passkeys are (one then counts as the multi-factor it is). The caller
 * keeps `pending` (signed into the page's progress) for the answer, which it takes once.
 */
export async function startSecondFactorCheck(
  db: Db | Tx,
  user: Pick<UserRow, "instance_id" | "id">,
  settings: Pick<LoginSettings, "secondFactors">,
  domain: string,
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; pending: PendingWebAuthn }> {
  const userVerification: UserVerification = settings.secondFactors.includes("u2f") ? "discouraged" : "required";
  return startWebAuthnCheck(db, user.instance_id, { domain, userVerification, userId: user.id });
}

/**
 * The answer as `user`'s second factor: checked (and a wrong one counted toward the lockout)
 * by the one WebAuthn check, then it must count under the login settings `settings` of the
 * user's organization (provesSecondFactor). On success the caller adds
 * `webAuthnAmr(factor)` to the sign-in's `amr` (and `mfa` after a password).
 */
export async function verifySecondFactorCheck(
  tx: Tx,
  loginSettings: SettingsKind,
  settings: Pick<LoginSettings, "secondFactors" | "multiFactors">,
  user: UserRow,
  pending: PendingWebAuthn,
  answer: AuthenticationResponseJSON,
): Promise<WebAuthnCheck> {
  const checked = await verifyWebAuthnCheck(tx, { instanceId: user.instance_id, userId: user.id }, loginSettings, pending, answer, user);
  if (checked.ok && !provesSecondFactor(checked.factor, settings))
    return { ok: false, reason: "the login settings do not allow this key as a second factor", locked: false, refusal: "not_allowed", user };
  return checked;
}
