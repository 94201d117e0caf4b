import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { SessionRow } from "../../store/schema.js";
import type { UserVerification } from "../user-webauthn/authentication.js";
import type { CodeCheck } from "../user-factor/model.js";
import type { ObjectDetails } from "../details.js";

/** When a session checked each factor (ISO dates), by the factor's name in the API. */
export type SessionFactorsJson = SessionRow["factors"];
export type SessionUserAgentJson = SessionRow["user_agent"];
/** The pending WebAuthn challenge a session's next webAuthN check answers. */
export type SessionChallengesJson = SessionRow["challenges"];

/** The aggregate of session events. */
export const AGGREGATE = "session";

/** The factors a session checks with a code or password, by their names in the API and in `sessions.factors`. */
export type SessionFactor = Exclude<keyof SessionFactorsJson, "user" | "webAuthN" | "idpIntent">;

/** What a request asks a session to check. */
export interface SessionChecks {
  user?: { userId: string } | { loginName: string };
  password?: string;
  totp?: string;
  otpEmail?: string;
  otpSms?: string;
  recoveryCode?: string;
  /** The browser's answer to the session's WebAuthn challenge. */
  webAuthN?: AuthenticationResponseJSON;
  /** An external login that succeeded (PlatformIDPIntents): it names its user, as a passkey does. */
  idpIntent?: { id: string; token: string };
}

/** The checks of a code, by their names in the API and as second factors. */
export const CODE_CHECKS: [keyof SessionChecks & SessionFactor, CodeCheck][] = [
  ["totp", "totp"],
  ["otpEmail", "otp_email"],
  ["otpSms", "otp_sms"],
  ["recoveryCode", "recovery_code"],
];

/** One-time code challenges: sent, or answered (`returnCode`). */
export interface SessionChallenges {
  otpEmail?: { returnCode: boolean };
  otpSms?: { returnCode: boolean };
  webAuthN?: { domain: string; userVerification: UserVerification };
}

/** What requested challenges answer: codes with `returnCode`, a passkey challenge's options. */
export interface ChallengeAnswers {
  otpEmail?: string;
  otpSms?: string;
  webAuthN?: PublicKeyCredentialRequestOptionsJSON;
}

/** Changes of a session beyond its checks: metadata keys to set (empty: remove) and a new lifetime. */
export interface SessionChanges {
  checks: SessionChecks;
  challenges: SessionChallenges;
  metadata: Record<string, Uint8Array>;
  lifetimeMs: number | undefined;
}

/** At most this many metadata keys per session (the proto's bound on one request holds for the whole session too). */
export const MAX_METADATA_KEYS = 20;

interface SessionUser {
  id: string;
  loginName: string;
  displayName: string;
  orgId: string;
  checkedAt: Date;
}

/** A session as reads show it. */
export interface SessionView {
  details: ObjectDetails;
  createdAt: Date;
  user: SessionUser | undefined;
  factors: Partial<Record<SessionFactor, Date>>;
  webAuthN: { checkedAt: Date; userVerified: boolean } | undefined;
  idpIntent: { checkedAt: Date; idpId: string } | undefined;
  metadata: Record<string, Uint8Array>;
  userAgent: SessionUserAgentJson;
  expiresAt: Date | undefined;
}
