import type { UserWebAuthnKeyRow } from "../../store/schema.js";
import type { LoginSettings } from "../settings/login.js";

/** A passkey (signs the person in) or a security key (a second factor). */
export type WebAuthnKind = UserWebAuthnKeyRow["kind"];

/**
 * What a checked WebAuthn answer proves, one rule for the session API, its finalization and
 * the login pages. Any answer of one of the person's credentials proves possession of a key:
 * what a security key proves, one factor (`hwk`, or `swk` for a synced passkey). A passkey's
 * answer with user verification proves the person too: two factors in one (`user` as well).
 * A security key's answer stays one factor even when its authenticator verified the person:
 * it was registered as a second factor, and the login settings count it as one.
 */

export interface WebAuthnFactor {
  userVerified: boolean;
  kind: WebAuthnKind;
  /** singleDevice (a key bound to one device: `hwk`) or multiDevice (a synced passkey: `swk`). */
  deviceType: string;
}

/** Two factors in one: a passkey that verified the person. */
export const provesPerson = (f: Pick<WebAuthnFactor, "kind" | "userVerified">): boolean => f.kind === "passkey" && f.userVerified;

/** The `amr` values of the answer (RFC 8176). */
export function webAuthnAmr(f: WebAuthnFactor): string[] {
  const key = f.deviceType === "multiDevice" ? "swk" : "hwk";
  return provesPerson(f) ? ["user", key] : [key];
}

/**
 * Whether the answer is the second factor after a password under the login settings: a key's
 * possession where security keys (U2F) are allowed, and a user-verified passkey where
 * passkeys are allowed as multi-factors (`multi_factors` PASSKEY).
 */
export function provesSecondFactor(f: Pick<WebAuthnFactor, "kind" | "userVerified">, settings: Pick<LoginSettings, "secondFactors" | "multiFactors">): boolean {
  return settings.secondFactors.includes("u2f") || (provesPerson(f) && settings.multiFactors.includes("passkey"));
}
