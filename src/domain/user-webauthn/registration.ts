import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { requireSchemaAllows } from "../user-schema/users.js";
import type { Tx } from "../../store/db.js";
import { newId } from "../../store/ids.js";
import type { WebAuthnKind } from "./factor.js";
import type { UserRow } from "../../store/schema.js";
import type { Actor, ObjectDetails } from "../details.js";
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from "../errors.js";
import type { LoginSettings } from "../settings/login.js";
import { removeKeepingOne } from "../user-factor/due.js";
import { changeUser, userRowForUpdate } from "../user/commands.js";
import { answerOrigin, checkedRpId } from "./relying-party.js";

/**
 * Registering WebAuthn credentials, with @simplewebauthn/server: it builds the options and
 * verifies attestations (CBOR, COSE keys, every attestation format) as the W3C
 * specification says; it is the library the WebAuthn community keeps for this, maintained,
 * typed and without native code. One implementation for both kinds, stored in one table with
 * their kind: passkeys are discoverable and user-verified (a sign-in by themselves); security
 * keys (`u2f`, a second factor) need neither, user verification preferred. Attestation
 * `none`, as passkey providers give no other.
 */

const TRANSPORTS: ReadonlySet<string> = new Set(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

/** How long a started registration may be finished. */
const REGISTRATION_TTL_MS = 10 * 60_000;

export type Attachment = "platform" | "cross-platform" | undefined;

/** How messages name each kind. */
const KIND_NAME: Record<WebAuthnKind, string> = { passkey: "passkey", u2f: "security key" };

async function person(tx: Tx, actor: Actor, userId: string): Promise<UserRow> {
  const user = await userRowForUpdate(tx, actor.instanceId, userId);
  if (user.type === "machine") throw failedPrecondition(`user ${userId} is a machine user: passkeys and security keys belong to people`);
  if (user.type === "schema") await requireSchemaAllows(tx, user, "webauthn");
  return user;
}

export async function startRegistration(
  tx: Tx,
  actor: Actor,
  userId: string,
  kind: WebAuthnKind,
  input: { domain: string; rpName: string; attachment: Attachment },
): Promise<{ id: string; details: ObjectDetails; options: PublicKeyCredentialCreationOptionsJSON }> {
  const user = await person(tx, actor, userId);
  const rpId = await checkedRpId(tx, actor.instanceId, input.domain);
  const existing = await tx
    .selectFrom("user_webauthn_keys")
    .select(["credential_id", "transports"])
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("state", "=", "ready")
    .execute();
  const userVerification = kind === "passkey" ? "required" : "preferred";
  const options = await generateRegistrationOptions({
    rpName: input.rpName,
    rpID: rpId,
    userName: user.username,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: user.name,
    attestationType: "none",
    // The same authenticator twice would only be a second name for one key.
    excludeCredentials: existing.map((c) => ({ id: c.credential_id!, transports: c.transports })),
    authenticatorSelection: {
      residentKey: kind === "passkey" ? "required" : "discouraged",
      userVerification,
      ...(input.attachment && { authenticatorAttachment: input.attachment }),
    },
  });
  const id = newId();
  const details = await changeUser(tx, actor, user, [{ type: `user.${kind}.added`, payload: { id, rpId } }], {});
  // A registration started again replaces the one left unfinished.
  await tx
    .deleteFrom("user_webauthn_keys")
    .where("instance_id", "=", actor.instanceId)
    .where("user_id", "=", userId)
    .where("kind", "=", kind)
    .where("state", "=", "pending")
    .execute();
  await tx
    .insertInto("user_webauthn_keys")
    .values({
      instance_id: actor.instanceId,
      id,
      user_id: userId,
      kind,
      state: "pending",
      name: "",
      rp_id: rpId,
      challenge: options.challenge,
      user_verification: userVerification,
      created_at: details.changeDate,
    })
    .execute();
  return { id, details, options };
}

export async function finishRegistration(
  tx: Tx,
  actor: Actor,
  userId: string,
  kind: WebAuthnKind,
  id: string,
  response: RegistrationResponseJSON,
  name: string,
): Promise<ObjectDetails> {
  const user = await person(tx, actor, userId);
  const row = await tx
    .selectFrom("user_webauthn_keys")
    .selectAll()
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("kind", "=", kind)
    .executeTakeFirst();
  if (!row) throw notFound(`user ${userId} has no ${KIND_NAME[kind]} ${id}`);
  if (row.state !== "pending" || !row.challenge) throw failedPrecondition(`${KIND_NAME[kind]} ${id} is registered already`);
  if (Date.now() - new Date(row.created_at).getTime() > REGISTRATION_TTL_MS)
    throw failedPrecondition(`the registration of ${KIND_NAME[kind]} ${id} has expired: start again`);
  const origin = answerOrigin(response?.response?.clientDataJSON, row.rp_id);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: row.challenge,
      expectedOrigin: origin,
      expectedRPID: row.rp_id,
      requireUserVerification: kind === "passkey",
    });
  } catch (error) {
    throw invalidArgument(`publicKeyCredential: ${(error as Error).message}`);
  }
  if (!verified.verified) throw invalidArgument("publicKeyCredential: the attestation does not verify");
  const { credential, credentialDeviceType } = verified.registrationInfo;
  const taken = await tx
    .selectFrom("user_webauthn_keys")
    .select("id")
    .where("instance_id", "=", actor.instanceId)
    .where("credential_id", "=", credential.id)
    .executeTakeFirst();
  if (taken) throw alreadyExists("this authenticator's credential is registered already");
  const details = await changeUser(tx, actor, user, [{ type: `user.${kind}.verified`, payload: { id, name } }], {});
  await tx
    .updateTable("user_webauthn_keys")
    .set({
      state: "ready",
      name,
      challenge: null,
      credential_id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString("base64url"),
      sign_count: credential.counter,
      // Sent back to browsers in later options: only the values WebAuthn defines.
      transports: JSON.stringify((credential.transports ?? response.response.transports ?? []).filter((t) => TRANSPORTS.has(t))),
      device_type: credentialDeviceType,
    })
    .where("instance_id", "=", actor.instanceId)
    .where("id", "=", id)
    .execute();
  return details;
}

/** Removes a credential; `keepOne` as removeKeepingOne's (a passkey or security key may be a person's last factor). */
export async function removeWebAuthnKey(
  tx: Tx,
  actor: Actor,
  userId: string,
  kind: WebAuthnKind,
  id: string,
  keepOne: LoginSettings | undefined,
): Promise<ObjectDetails> {
  const user = await person(tx, actor, userId);
  await removeKeepingOne(tx, user, keepOne, async () => {
    const removed = await tx
      .deleteFrom("user_webauthn_keys")
      .where("instance_id", "=", actor.instanceId)
      .where("user_id", "=", userId)
      .where("kind", "=", kind)
      .where("id", "=", id)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw notFound(`user ${userId} has no ${KIND_NAME[kind]} ${id}`);
  });
  return changeUser(tx, actor, user, [{ type: `user.${kind}.removed`, payload: { id } }], {});
}
