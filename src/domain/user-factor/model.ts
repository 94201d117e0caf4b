import type { UserFactorRow } from "../../store/schema.js";

/** A second factor's type: an authenticator app's codes, or codes by email or SMS. */
export type FactorType = UserFactorRow["type"];

/**
 * What a user can sign in with (GET /users/{id}/auth_methods, types only), and the second
 * factors the login asks for. A one-time code factor counts only while its address or number
 * is verified: a code must go where the person proved to be.
 */
export const AUTH_METHODS = ["password", "passkey", "idp", "totp", "u2f", "otp_email", "otp_sms", "recovery_codes"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** The second factors a login settings' `second_factors` can allow: the user_factors kinds and security keys. */
export type SecondFactorType = FactorType | "u2f";
export const SECOND_FACTORS: readonly SecondFactorType[] = ["totp", "u2f", "otp_email", "otp_sms"];

/**
 * Authenticators that are two factors in one, which a login settings' `multi_factors` can
 * allow as the step after a password (signing in with one alone is `passwordless_type`'s).
 */
export type MultiFactorType = "passkey";
export const MULTI_FACTORS: readonly MultiFactorType[] = ["passkey"];

/** A check of a second factor: one of the user's factors, or one of its recovery codes. */
export type SecondFactorCheck = SecondFactorType | "recovery_code";

/** The checks answered with a code (domain/user-factor/checks.ts); a security key answers a WebAuthn challenge. */
export type CodeCheck = Exclude<SecondFactorCheck, "u2f">;

/** The event names of a factor's changes (`user.<type>.added`, …): never a secret or code in the payload. */
export const FACTOR_EVENT: Record<FactorType, string> = { totp: "user.totp", otp_email: "user.otp_email", otp_sms: "user.otp_sms" };
