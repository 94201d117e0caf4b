import { sql } from "kysely";
import { hashToken } from "../crypto/tokens.js";
import { failedPrecondition, notFound, permissionDenied } from "../domain/errors.js";
import { sameHash } from "../domain/session/token.js";
import type { SettingsKind } from "../domain/settings/kind.js";
import { loginSettingsOf, mfaRequired } from "../domain/settings/login.js";
import { usableFactors } from "../domain/user-factor/queries.js";
import type { Db } from "../store/eventstore.js";
import type { SessionFactorsJson } from "../store/schema.js";
import { payloadAdapters, type OidcPayload } from "./payload-adapter.js";
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

function interactions(db: Db, instanceId: string) {
  return new (payloadAdapters(() => db, instanceId))(MODEL);
}

async function waiting(db: Db, instanceId: string, id: string): Promise<OidcPayload & { params: Record<string, unknown>; iat: number; exp: number; returnTo: string }> {
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
    maxAgeS: Number.isFinite(maxAge) ? maxAge : undefined,
    uiLocales: words(p.ui_locales),
  };
}

const SECOND_FACTORS = ["totp", "otpEmail", "otpSms", "recoveryCode"] as const;

/**
 * How the session signed the person in (RFC 8176): `pwd` for a password, `otp` for a code,
 * `hwk` for a device-bound key or `swk` for a synced passkey, `user` when the authenticator
 * verified the person; `mfa` for factors of two kinds (a user-verified passkey is two).
 */
export function amrOf(f: SessionFactorsJson): string[] {
  const amr: string[] = [];
  if (f.password) amr.push("pwd");
  if (SECOND_FACTORS.some((name) => f[name])) amr.push("otp");
  if (f.webAuthN) {
    if (f.webAuthN.userVerified) amr.push("user");
    amr.push(f.webAuthN.deviceType === "multiDevice" ? "swk" : "hwk");
  }
  const kinds = Number(Boolean(f.password)) + Number(SECOND_FACTORS.some((name) => f[name])) + (f.webAuthN ? (f.webAuthN.userVerified ? 2 : 1) : 0);
  if (kinds >= 2) amr.push("mfa");
  return amr;
}

/**
 * Finishes a waiting request as the session's user, when the session's checks and the user's
 * login settings satisfy it (password sign-in allowed, a verified email where required);
 * answers where the browser goes next. The ID token's `amr` and `auth_time` are the session's:
 * `pwd` for a password, `otp` for a code, `mfa` for both; the newest check's time.
 */
export async function finalizeAuthRequest(db: Db, instanceId: string, loginSettings: SettingsKind, id: string, sessionId: string, sessionToken: string): Promise<string> {
  const payload = await waiting(db, instanceId, id);
  if (payload.result) throw failedPrecondition(`auth request ${id} is finished already`);
  const session = await db.selectFrom("sessions").selectAll().where("instance_id", "=", instanceId).where("id", "=", sessionId).executeTakeFirst();
  if (!session) throw notFound(`session ${sessionId} not found`);
  if (!sameHash(session.token_hash, hashToken(sessionToken))) throw permissionDenied("session_token is not the session's current token");
  if (session.expires_at && new Date(session.expires_at).getTime() <= Date.now()) throw failedPrecondition(`session ${sessionId} has expired`);
  const user = session.user_id
    ? await db
        .selectFrom("users")
        .innerJoin("orgs", (j) => j.onRef("orgs.instance_id", "=", "users.instance_id").onRef("orgs.id", "=", "users.org_id"))
        .selectAll("users")
        .where("users.instance_id", "=", instanceId)
        .where("users.id", "=", session.user_id)
        .where("users.state", "=", "active")
        .where("orgs.state", "=", "active")
        .executeTakeFirst()
    : undefined;
  if (!user) throw failedPrecondition(`session ${sessionId} has no active user`);
  const org = requestedOrg(splitScope(payload.params.scope as string | undefined));
  if (org !== undefined && org !== user.org_id) throw failedPrecondition("the request asks for a user of another organization");

  const f = session.factors as SessionFactorsJson;
  const seconds = (at: string | undefined) => (at === undefined ? undefined : Math.floor(new Date(at).getTime() / 1000));
  const settings = await loginSettingsOf(db, instanceId, user.org_id, loginSettings);
  // A user-verified passkey signs in by itself (two factors in one), where the settings allow it.
  const passkey = f.webAuthN?.kind === "passkey" && f.webAuthN.userVerified ? f.webAuthN : undefined;
  if (passkey && !f.password && !settings.passwordlessAllowed) throw failedPrecondition("the login settings of the user's organization do not allow signing in with a passkey alone");
  if (!f.password && !passkey) throw failedPrecondition(`session ${sessionId} has checked no password and no user-verified passkey`);
  // The login settings hold for a login UI of one's own as for the built-in pages.
  if (f.password && !passkey && !settings.allowUsernamePassword) throw failedPrecondition("the login settings of the user's organization do not allow signing in with a password");
  if (settings.requireVerifiedEmail && user.email && user.email_verified !== true) throw failedPrecondition("the login settings ask for a verified email address: verify the user's first (VerifyEmail)");
  const now = Math.floor(Date.now() / 1000);
  const codeChecked = SECOND_FACTORS.map((name) => seconds(f[name]?.checkedAt)).filter((t): t is number => t !== undefined);
  const keyChecked = seconds(f.webAuthN?.checkedAt);
  const secondChecked = [...codeChecked, ...(keyChecked !== undefined && (f.password || !passkey) ? [keyChecked] : [])];
  const latestSecond = passkey && !f.password ? keyChecked : secondChecked.length > 0 ? Math.max(...secondChecked) : undefined;
  const { factors } = await usableFactors(db, user);
  const needsSecond = factors.some((factor) => settings.secondFactors.includes(factor)) || mfaRequired(settings, false);
  if (needsSecond && (latestSecond === undefined || now - latestSecond > settings.secondFactorCheckLifetimeMs / 1000)) {
    throw failedPrecondition(`session ${sessionId} needs a second factor checked within the last ${settings.secondFactorCheckLifetimeMs / 1000} s`);
  }
  const authTime = Math.max(seconds(f.password?.checkedAt) ?? 0, latestSecond ?? 0);
  const params = payload.params;
  const prompts = String(params.prompt ?? "").split(" ");
  if (prompts.includes("login") && authTime < payload.iat) throw failedPrecondition("the request asks for a new sign-in (prompt=login): check the factors again");
  if (params.max_age !== undefined && now - authTime > Number(params.max_age)) throw failedPrecondition(`the request asks for a sign-in at most ${Number(params.max_age)} s old (max_age): check the factors again`);

  const amr = amrOf(f);
  // What the provider's interactionResult stores: the login, and the prompts of our policy that it resolves.
  const result = { login: { accountId: user.id, amr, ts: authTime, remember: true }, select_account: {}, create: {} };
  // Only while no result is there: of two finalizations racing, one wins.
  const finished = await db
    .updateTable("oidc_payloads")
    .set({ payload: JSON.stringify({ ...payload, result }) })
    .where("instance_id", "=", instanceId)
    .where("model", "=", MODEL)
    .where("id", "=", id)
    .where(sql<boolean>`payload->'result' is null`)
    .executeTakeFirst();
  if (Number(finished.numUpdatedRows) === 0) throw failedPrecondition(`auth request ${id} is finished already`);
  return payload.returnTo;
}
