import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import type { Db, Tx } from "../../store/db.js";
import type { WebAuthnKind } from "./factor.js";
import { answerOrigin } from "./relying-party.js";

/**
 * Signing in with a WebAuthn credential: options for the browser's navigator.credentials.get
 * (the user's credentials of the domain, or none for a discoverable passkey when the user is
 * not known yet), and the check of its answer against the challenge, the domain, the stored
 * public key and the signature counter. A counter that does not move forward means a copy of
 * the authenticator signed: the answer is refused and the caller records it.
 */

export type UserVerification = "required" | "preferred" | "discouraged";

export async function assertionOptions(
  db: Db | Tx,
  instanceId: string,
  input: { rpId: string; userVerification: UserVerification; userId?: string },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const allow = input.userId
    ? await db
        .selectFrom("user_webauthn_keys")
        .select(["credential_id", "transports"])
        .where("instance_id", "=", instanceId)
        .where("user_id", "=", input.userId)
        .where("rp_id", "=", input.rpId)
        .where("state", "=", "ready")
        .execute()
    : [];
  return generateAuthenticationOptions({
    rpID: input.rpId,
    userVerification: input.userVerification,
    allowCredentials: allow.map((c) => ({ id: c.credential_id!, transports: c.transports })),
  });
}

export type AssertionOutcome =
  | { ok: true; userId: string; keyId: string; kind: WebAuthnKind; userVerified: boolean; deviceType: string }
  /** `key`: the registered credential the answer named (whose user a wrong answer counts against); `clone`: its counter went back. */
  | { ok: false; reason: string; key?: { userId: string; keyId: string; kind: WebAuthnKind }; clone?: boolean };

/** Checks an answer to `challenge`; a right one moves the credential's counter on (in `tx`). */
export async function checkAssertion(
  tx: Tx,
  instanceId: string,
  response: AuthenticationResponseJSON,
  expected: { challenge: string; rpId: string; userVerification: UserVerification; userId?: string },
): Promise<AssertionOutcome> {
  const key =
    typeof response?.id === "string"
      ? await tx
          .selectFrom("user_webauthn_keys")
          .selectAll()
          .where("instance_id", "=", instanceId)
          .where("credential_id", "=", response.id)
          .where("state", "=", "ready")
          .forUpdate()
          .executeTakeFirst()
      : undefined;
  if (!key) return { ok: false, reason: "the credential is not registered" };
  const named = { userId: key.user_id, keyId: key.id, kind: key.kind };
  // Another user's credential proves nothing here, and its counter is not this sign-in's to move.
  if (expected.userId !== undefined && key.user_id !== expected.userId) return { ok: false, reason: "the passkey is another user's" };
  if (key.rp_id !== expected.rpId) return { ok: false, reason: `the credential belongs to ${key.rp_id}, not ${expected.rpId}`, key: named };
  let origin: string;
  try {
    origin = answerOrigin(response.response?.clientDataJSON, expected.rpId);
  } catch (error) {
    return { ok: false, reason: (error as Error).message, key: named };
  }
  const stored = Number(key.sign_count);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: expected.challenge,
      expectedOrigin: origin,
      expectedRPID: expected.rpId,
      // The counter is compared below, once the signature holds: the library compares it
      // first, and an unsigned answer naming someone's credential must not raise the alarm.
      credential: {
        id: key.credential_id!,
        publicKey: new Uint8Array(Buffer.from(key.public_key!, "base64url")),
        counter: 0,
        transports: key.transports as never,
      },
      requireUserVerification: expected.userVerification === "required",
    });
  } catch (error) {
    return { ok: false, reason: (error as Error).message, key: named };
  }
  if (!verified.verified) return { ok: false, reason: "the assertion does not verify", key: named };
  const info = verified.authenticationInfo;
  if ((stored > 0 || info.newCounter > 0) && info.newCounter <= stored) {
    return { ok: false, reason: "the authenticator's signature counter went back: it may be a copy", key: named, clone: true };
  }
  await tx.updateTable("user_webauthn_keys").set({ sign_count: info.newCounter }).where("instance_id", "=", instanceId).where("id", "=", key.id).execute();
  return {
    ok: true,
    userId: key.user_id,
    keyId: key.id,
    kind: key.kind,
    userVerified: info.userVerified,
    deviceType: key.device_type ?? info.credentialDeviceType,
  };
}
