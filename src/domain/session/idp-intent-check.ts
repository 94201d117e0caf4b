import type { Tx } from "../../store/db.js";
import type { PendingEvent } from "../../store/events.js";
import type { SessionChecks, SessionFactorsJson } from "./model.js";
import type { IdpIntentRow, UserRow } from "../../store/schema.js";
import type { Actor } from "../details.js";
import { failedPrecondition, invalidArgument } from "../errors.js";
import { providerReaches } from "../idp/login-use.js";
import { consumeIdpIntent, provenIntent } from "../idp-intent/commands.js";
import type { SettingsKind } from "../settings/kind.js";
import { loginSettingsOf } from "../settings/login.js";
import { linkedUser } from "../user/external-identities.js";
import { recordFailedCheck } from "../user/lockout.js";
import { findUserRow } from "../user/queries.js";
import { rowUser, stateRefusal, type SignInCheck, type SignInReason, type SignInUser } from "../audit/sign-ins.js";

/**
 * The session check of an external login (`checks.idpIntent`, docs/api.md): an intent of the
 * instance that succeeded, is not used and has not expired, proven by its token, whose
 * external account is linked to an active user — the session's, or, for a session without
 * one yet, the user it names — of an organization the provider reaches (domain/idp/login-use.ts). The link is read now, not at the callback: a login UI may
 * have registered and linked the user since, and a link removed since no longer counts.
 *
 * Proven first, before any code of the same write is used up, and used up (`consume`) only
 * once every check passed. A wrong ID or token counts like a wrong code toward the lockout of
 * the session's user; without one it counts against nobody (anyone can name any intent) and
 * the session's rate limit bounds the guesses.
 */

/** A refusal, with the sign-in attempt it was (domain/audit/sign-ins.ts). */
type Refused = { ok: false; error: Error; locked: boolean; check: SignInCheck };
export type IntentChecked = { ok: true; user: UserRow; row: IdpIntentRow & { external_user_id: string } } | Refused;

export async function checkIdpIntent(
  tx: Tx,
  loginSettings: SettingsKind,
  actor: Actor,
  user: UserRow | undefined,
  check: NonNullable<SessionChecks["idpIntent"]>,
): Promise<IntentChecked> {
  // Whose attempt a refusal was: the session's user, else the linked user once known.
  const attempt = (outcome: SignInReason, of = user && rowUser(user)): SignInCheck => ({ method: "idp", outcome, ...(of && { user: of }) });
  const refuse = (why: string, outcome: SignInReason, of?: SignInUser): Refused => ({
    ok: false,
    error: failedPrecondition(`checks.idpIntent: ${why}`),
    locked: false,
    check: attempt(outcome, of),
  });
  const proven = await provenIntent(tx, actor.instanceId, check.id, check.token, true);
  if (!proven.ok) {
    if (proven.kind === "unusable") return { ok: false, error: proven.error, locked: false, check: attempt("wrong_code") };
    const error = invalidArgument("checks.idpIntent: the intent or its token is not valid");
    if (!user) return { ok: false, error, locked: false, check: attempt("wrong_code") };
    const { maxPasswordAttempts } = await loginSettingsOf(tx, actor.instanceId, user.org_id, loginSettings);
    return { ok: false, error, check: attempt("wrong_code"), ...(await recordFailedCheck(tx, actor.instanceId, user.id, maxPasswordAttempts)) };
  }
  const { row } = proven;
  const linked = await linkedUser(tx, actor.instanceId, row.idp_id, row.external_user_id);
  if (!linked) return refuse("the external account is linked to no user (register or link one first)", "unknown_name");
  if (user && linked.userId !== user.id) return refuse("the external account is linked to another user than the session's", "not_allowed");
  const linkedTo = { id: linked.userId, orgId: linked.orgId };
  if (!linked.orgActive || linked.state !== "active")
    return refuse(`the user is ${linked.state === "locked" ? "locked" : "not active"}`, stateRefusal(linked.state) ?? "inactive", linkedTo);
  const owner = user ?? (await findUserRow(tx, actor.instanceId, linked.userId));
  if (!owner || owner.type !== "human") return refuse("the linked user cannot sign in", "not_allowed", linkedTo);
  if (!(await providerReaches(tx, actor.instanceId, owner.org_id, row.idp_id))) {
    return refuse(
      "the identity provider does not reach the user's organization (not active there, or its login settings do not allow external login)",
      "not_allowed",
      linkedTo,
    );
  }
  return { ok: true, user: owner, row };
}

/**
 * What a checked intent adds to a session once every check passed: the user when the session
 * had none, the factor (when, by which provider, which account), their events; the intent is
 * used up.
 */
export async function recordIdpIntentCheck(
  tx: Tx,
  actor: Actor,
  sessionId: string,
  checked: Extract<IntentChecked, { ok: true }>,
  sessionUserId: string | undefined,
  factors: SessionFactorsJson,
  now: Date,
): Promise<{ factors: SessionFactorsJson; events: PendingEvent[] }> {
  await consumeIdpIntent(tx, actor, checked.row, sessionId);
  const at = now.toISOString();
  const named = sessionUserId === undefined;
  return {
    factors: {
      ...factors,
      ...(named && { user: { id: checked.user.id, checkedAt: at } }),
      idpIntent: { checkedAt: at, idpId: checked.row.idp_id, externalUserId: checked.row.external_user_id },
    },
    events: [
      ...(named ? [{ type: "session.user.checked", payload: { userId: checked.user.id } }] : []),
      { type: "session.idp_intent.checked", payload: { idpId: checked.row.idp_id, intentId: checked.row.id } },
    ],
  };
}
