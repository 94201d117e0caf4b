import { hashToken } from "../../crypto/tokens.js";
import { failedPrecondition, notFound, permissionDenied } from "../../domain/errors.js";
import { constantTimeEqual } from "../../crypto/equal.js";
import type { SettingsKind } from "../../domain/settings/kind.js";
import { loginSettingsOf } from "../../domain/settings/login.js";
import { secondFactorDue } from "../../domain/user-factor/due.js";
import { firstFactorLifetimeMs, secondFactorLifetimeMs } from "../../domain/user-factor/check-lifetimes.js";
import { providerReaches } from "../../domain/idp/login-use.js";
import type { SecondFactorType } from "../../domain/user-factor/model.js";
import { provesPerson, provesSecondFactor, webAuthnAmr } from "../../domain/user-webauthn/factor.js";
import { findSessionRow } from "../../domain/session/queries.js";
import { linkedUser } from "../../domain/user/external-identities.js";
import { loginUserById } from "../../domain/user/login-names.js";
import { passwordState } from "../../domain/user/passwords.js";
import { storeResultOnce } from "../adapters/interaction-results.js";
import type { Db } from "../../store/db.js";
import { acrOf, withRequestedAcr } from "./acr.js";
import type { SessionFactorsJson } from "../../domain/session/model.js";
import { payloadAdapters, type OidcPayload } from "../adapters/payload-adapter.js";
import { requestedOrg, splitScope } from "./scopes.js";

/**
 * Authorization requests a login UI of the product's own finishes (login-ui.ts sends the
 * browser there): the provider's waiting interactions, read and finished in its storage as
 * its own `interactionResult` does, without the browser's cookies (the UI calls from its
 * server). The browser then follows the interaction's `returnTo`, where the provider checks
 * that it is the browser that asked.
 */

const MODEL = "Interaction";

export interface AuthRequestView {
  id: string;
  createdAt: Date;
  clientId: string;
  scope: string[];
  redirectUri: string;
  prompt: string[];
  loginHint: string;
  maxAgeS: number | undefined;
  uiLocales: string[];
}

const MAX_DURATION_S = 315_576_000_000;

function interactions(db: Db, instanceId: string) {
  return new (payloadAdapters(() => db, instanceId))(MODEL);
}

async function waiting(
  db: Db,
  instanceId: string,
  id: string,
): Promise<OidcPayload & { params: Record<string, unknown>; iat: number; exp: number; returnTo: string }> {
  const payload = await interactions(db, instanceId).find(id);
  if (!payload || typeof payload.returnTo !== "string") throw notFound(`auth request ${id} not found (or expired)`);
  return payload as never;
}

export async function authRequestOf(db: Db, instanceId: string, id: string): Promise<AuthRequestView> {
  const payload = await waiting(db, instanceId, id);
  const p = payload.params;
  const words = (v: unknown) => (typeof v === "string" ? v.split(" ").filter(Boolean) : []);
  const maxAge = p.max_age === undefined ? undefined : Number(p.max_age);
  return {
    id,
    createdAt: new Date(payload.iat * 1000),
    clientId: String(p.client_id ?? ""),
    scope: words(p.scope),
    redirectUri: String(p.redirect_uri ?? ""),
    prompt: [...new Set([...words(p.prompt), ...((payload.prompt as { name?: string } | undefined)?.name === "consent" ? ["consent"] : [])])],
    loginHint: String(p.login_hint ?? ""),
    // What a Duration can carry (about 10,000 years); a longer max_age says nothing more.
    maxAgeS: maxAge !== undefined && Number.isFinite(maxAge) ? Math.min(maxAge, MAX_DURATION_S) : undefined,
    uiLocales: words(p.ui_locales),
  };
}

const SECOND_FACTORS = ["totp", "otpEmail", "otpSms", "recoveryCode"] as const;
/** The login settings' name of each code check. */
const FACTOR_TYPES: Record<Exclude<(typeof SECOND_FACTORS)[number], "recoveryCode">, SecondFactorType> = {
  totp: "totp",
  otpEmail: "otp_email",
  otpSms: "otp_sms",
};

/**
 * How the session signed the person in (RFC 8176): `pwd` for a password, `fed` for an external
 * login (an identity provider intent), `otp` for a code,
 * `hwk` for a device-bound key or `swk` for a synced passkey, `user` when a passkey verified
 * the person; `mfa` for factors of two kinds (a user-verified passkey is two, a security key
 * one: user-webauthn/factor.ts).
 */
function amrOf(f: SessionFactorsJson): string[] {
  const amr: string[] = [];
  if (f.password) amr.push("pwd");
  if (f.idpIntent) amr.push("fed");
  if (SECOND_FACTORS.some((name) => f[name])) amr.push("otp");
  if (f.webAuthN) amr.push(...webAuthnAmr(f.webAuthN));
  // A password and an external login are both first factors: together they are one kind.
  const kinds =
    Number(Boolean(f.password || f.idpIntent)) + Number(SECOND_FACTORS.some((name) => f[name])) + (f.webAuthN ? (provesPerson(f.webAuthN) ? 2 : 1) : 0);
  if (kinds >= 2) amr.push("mfa");
  return amr;
}

/**
 * Finishes a waiting request as the session's user, when the session's checks and the user's
 * login settings satisfy it (password sign-in allowed, a verified email where required);
 * answers where the browser goes next. The ID token's `amr` and `auth_time` are the session's
 * (amrOf; the oldest check the sign-in needs), its `acr` follows from `amr` (acr.ts).
 */
export async function finalizeAuthRequest(
  db: Db,
  instanceId: string,
  loginSettings: SettingsKind,
  id: string,
  sessionId: string,
  sessionToken: string,
): Promise<string> {
  const payload = await waiting(db, instanceId, id);
  if (payload.result) throw failedPrecondition(`auth request ${id} is finished already`);
  // Consent is the built-in pages' (they grant it at once); a login UI finishes sign-ins only.
  if ((payload.prompt as { name?: string } | undefined)?.name === "consent")
    throw failedPrecondition(`auth request ${id} waits for consent, not for a sign-in`);
  const session = await findSessionRow(db, instanceId, sessionId);
  if (!session) throw notFound(`session ${sessionId} not found`);
  if (!constantTimeEqual(session.token_hash, hashToken(sessionToken))) throw permissionDenied("session_token is not the session's current token");
  if (session.expires_at && new Date(session.expires_at).getTime() <= Date.now()) throw failedPrecondition(`session ${sessionId} has expired`);
  const found = session.user_id ? await loginUserById(db, instanceId, session.user_id) : undefined;
  const user = found?.state === "active" ? found.row : undefined;
  if (!user) throw failedPrecondition(`session ${sessionId} has no active user`);
  const org = requestedOrg(splitScope(payload.params.scope as string | undefined));
  if (org !== undefined && org !== user.org_id) throw failedPrecondition("the request asks for a user of another organization");

  const f = session.factors as SessionFactorsJson;
  const seconds = (at: string | undefined) => (at === undefined ? undefined : Math.floor(new Date(at).getTime() / 1000));
  // A request that accepts only multi-factor (acr_values) is served as if the settings forced it.
  const settings = withRequestedAcr(await loginSettingsOf(db, instanceId, user.org_id, loginSettings), payload.params);
  // The first factor, as the login settings allow it: a password where passwords sign in, a
  // user-verified passkey (two factors in one) where passkeys sign in alone, an external
  // login where identity providers do.
  const passkey = f.webAuthN && provesPerson(f.webAuthN) ? f.webAuthN : undefined;
  const byPasskey = passkey !== undefined && settings.passwordlessAllowed;
  const byPassword = !byPasskey && f.password !== undefined && settings.allowUsernamePassword;
  const byIdp = !byPasskey && !byPassword && f.idpIntent !== undefined && settings.allowExternalIdp;
  if (!byPasskey && !byPassword && !byIdp) {
    if (passkey && !f.password) throw failedPrecondition("the login settings of the user's organization do not allow signing in with a passkey alone");
    if (f.password) throw failedPrecondition("the login settings of the user's organization do not allow signing in with a password");
    if (f.idpIntent) throw failedPrecondition("the login settings of the user's organization do not allow signing in with an identity provider");
    throw failedPrecondition(`session ${sessionId} has checked no password, no user-verified passkey and no external login`);
  }
  // The external account must still be the user's: a link removed since no longer signs in.
  if (byIdp && (await linkedUser(db, instanceId, f.idpIntent!.idpId, f.idpIntent!.externalUserId))?.userId !== user.id) {
    throw failedPrecondition(`the external account session ${sessionId} checked is no longer linked to its user: check an external login again`);
  }
  if (byIdp && !(await providerReaches(db, instanceId, user.org_id, f.idpIntent!.idpId))) {
    throw failedPrecondition(`the identity provider of the external login session ${sessionId} checked is no longer active in the user's organization`);
  }
  if (byPassword) {
    // The password checked must still be the user's, and one it may keep.
    const secret = await passwordState(db, instanceId, user.id);
    if (!secret || new Date(f.password!.checkedAt).getTime() < secret.changedAt.getTime())
      throw failedPrecondition(`the password of session ${sessionId} has changed since it was checked: check it again`);
    if (secret.changeRequired) throw failedPrecondition("the user must choose a new password first (SetPassword with the current one)");
  }
  if (settings.requireVerifiedEmail && user.email && user.email_verified !== true)
    throw failedPrecondition("the login settings ask for a verified email address: verify the user's first (VerifyEmail)");
  const now = Math.floor(Date.now() / 1000);
  const first = seconds((byPasskey ? passkey! : byIdp ? f.idpIntent! : f.password!).checkedAt)!;
  // Second factors the login settings allow (a recovery code always stands in): codes, a
  // security key where U2F is allowed, a user-verified passkey where it is a multi-factor.
  const allowed = SECOND_FACTORS.filter((name) => name === "recoveryCode" || settings.secondFactors.includes(FACTOR_TYPES[name]));
  const key = (byPassword || byIdp) && f.webAuthN && provesSecondFactor(f.webAuthN, settings) ? f.webAuthN : undefined;
  const secondChecked = [...allowed.map((name) => seconds(f[name]?.checkedAt)), seconds(key?.checkedAt)].filter((t): t is number => t !== undefined);
  const second = byPasskey ? first : secondChecked.length > 0 ? Math.max(...secondChecked) : undefined;
  // A person with a second factor gives it after an identity provider too; force_mfa_local_only waives only the forced set-up.
  const amr = amrOf(f);
  const firstLifetimeS = (byPasskey ? settings.multiFactorCheckLifetimeMs : firstFactorLifetimeMs(settings, amr)) / 1000;
  if (now - first > firstLifetimeS)
    throw failedPrecondition(
      `session ${sessionId} checked its first factor more than ${firstLifetimeS} s ago (the login settings' check lifetime): check it again`,
    );
  const due = await secondFactorDue(db, user, settings, byIdp);
  const needsSecond = due.ask || due.setUp;
  const secondLifetimeS = secondFactorLifetimeMs(settings, amr) / 1000;
  if (needsSecond && (second === undefined || now - second > secondLifetimeS)) {
    throw failedPrecondition(`session ${sessionId} needs a second factor the login settings allow, checked within the last ${secondLifetimeS} s`);
  }
  // The sign-in is as old as the oldest check it needs: a fresh code does not renew an old password.
  const authTime = needsSecond && second !== undefined ? Math.min(first, second) : first;
  const params = payload.params;
  const prompts = String(params.prompt ?? "").split(" ");
  if (prompts.includes("login") && authTime < payload.iat)
    throw failedPrecondition("the request asks for a new sign-in (prompt=login): check the factors again");
  if (params.max_age !== undefined && now - authTime > Number(params.max_age))
    throw failedPrecondition(`the request asks for a sign-in at most ${Number(params.max_age)} s old (max_age): check the factors again`);

  // What the provider's interactionResult stores: the login, and the prompts of our policy that it resolves.
  const result = { login: { accountId: user.id, amr, acr: acrOf(amr), ts: authTime, remember: true }, select_account: {}, create: {} };
  if (!(await storeResultOnce(db, instanceId, MODEL, id, { ...payload, result }))) throw failedPrecondition(`auth request ${id} is finished already`);
  return payload.returnTo;
}
