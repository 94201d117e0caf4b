import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { schemaAllows } from "../user-schema/users.js";
import type { Db, Tx } from "../../store/db.js";
import type { SessionChallengesJson } from "../session/model.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor } from "../details.js";
import type { SettingsKind } from "../settings/kind.js";
import { loginSettingsOf } from "../settings/login.js";
import { changeUser, userRowForUpdate } from "../user/commands.js";
import { clearFailedChecks, recordFailedCheck } from "../user/lockout.js";
import { findUserRow } from "../user/queries.js";
import { assertionOptions, checkAssertion, type UserVerification } from "./authentication.js";
import type { WebAuthnFactor } from "./factor.js";
import { checkedRpId } from "./relying-party.js";
import { stateRefusal } from "../audit/sign-ins.js";

/**
 * A sign-in step with a passkey or security key, one implementation for the session API and
 * the login pages: a challenge is started (its options go to the browser; the caller keeps
 * the pending challenge, as the session row does, and takes it once) and its answer checked:
 * the credential registered and of the step's user (or naming its user, when none is known
 * yet), the signature right, the counter moving forward. A wrong answer counts toward the
 * lockout of the step's user; a rightly signed one whose counter went back is recorded on
 * its owner (`user.<kind>.clone_suspected`) and counted there. A right one clears the count,
 * as a right code does.
 */

export type PendingWebAuthn = NonNullable<SessionChallengesJson["webAuthN"]>;

/** How long a challenge may be answered (the browser's own timeout is a minute). */
const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * A challenge on `domain` (one of the instance's, else InvalidArgument): for the user's
 * credentials of either kind when `userId` is given, else for any discoverable passkey (a
 * sign-in without a login name).
 */
export async function startWebAuthnCheck(
  db: Db | Tx,
  instanceId: string,
  input: { domain: string; userVerification: UserVerification; userId?: string },
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; pending: PendingWebAuthn }> {
  const rpId = await checkedRpId(db, instanceId, input.domain);
  const options = await assertionOptions(db, instanceId, {
    rpId,
    userVerification: input.userVerification,
    ...(input.userId !== undefined && { userId: input.userId }),
  });
  return { options, pending: { challenge: options.challenge, rpId, userVerification: input.userVerification, issuedAt: new Date().toISOString() } };
}

/**
 * A refused answer says why (`reason`, for the caller's error), why as a sign-in attempt
 * (`refusal`: domain/audit/sign-ins.ts) and whose attempt it was, when it is anyone's
 * (`user`: the given user, or the owner of the credential that signed it).
 */
export type WebAuthnCheck =
  | { ok: true; user: UserRow; factor: WebAuthnFactor }
  | { ok: false; reason: string; locked: boolean; expired?: boolean; refusal: "invalid_key" | "locked" | "inactive" | "not_allowed"; user?: UserRow };

/**
 * Checks `answer` to `pending`. With `user`, the answer must be by one of its credentials;
 * without, the credential names the user, who must be an active person.
 */
export async function verifyWebAuthnCheck(
  tx: Tx,
  actor: Actor,
  loginSettings: SettingsKind,
  pending: PendingWebAuthn,
  answer: AuthenticationResponseJSON,
  user?: UserRow,
): Promise<WebAuthnCheck> {
  if (Date.now() - new Date(pending.issuedAt).getTime() > CHALLENGE_TTL_MS)
    return { ok: false, reason: "the challenge has expired", locked: false, expired: true, refusal: "invalid_key", ...(user && { user }) };
  const outcome = await checkAssertion(tx, actor.instanceId, answer, { ...pending, ...(user && { userId: user.id }) });
  const named = outcome.ok ? outcome.userId : outcome.key?.userId;
  const owner = named ? await findUserRow(tx, actor.instanceId, named) : undefined;
  if (!outcome.ok) {
    if (outcome.clone && outcome.key && owner)
      await changeUser(
        tx,
        actor,
        await userRowForUpdate(tx, actor.instanceId, owner.id),
        [{ type: `user.${outcome.key.kind}.clone_suspected`, payload: { id: outcome.key.keyId } }],
        {},
      );
    // Without a user, an unsigned answer only names a credential: anyone could name anyone's,
    // so it counts against nobody (the caller's own limit bounds the tries).
    const counted = user ?? (outcome.clone ? owner : undefined);
    if (!counted) return { ok: false, reason: outcome.reason, locked: false, refusal: "invalid_key" };
    const { maxPasswordAttempts } = await loginSettingsOf(tx, actor.instanceId, counted.org_id, loginSettings);
    const { locked } = await recordFailedCheck(tx, actor.instanceId, counted.id, maxPasswordAttempts);
    return { ok: false, reason: outcome.reason, locked, refusal: "invalid_key", user: counted };
  }
  if (!owner || owner.type === "machine" || owner.state !== "active" || (owner.type === "schema" && !(await schemaAllows(tx, owner, "webauthn")))) {
    // Rightly signed: the credential's owner tried, whatever keeps it out.
    const refusal = !owner ? "invalid_key" : (stateRefusal(owner.state) ?? "not_allowed");
    return { ok: false, reason: "the passkey's user cannot sign in", locked: false, refusal, ...(owner && { user: owner }) };
  }
  await clearFailedChecks(tx, actor.instanceId, owner.id);
  return { ok: true, user: owner, factor: { userVerified: outcome.userVerified, kind: outcome.kind, deviceType: outcome.deviceType } };
}
