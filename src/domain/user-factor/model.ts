import type { FactorType } from "../../store/schema.js";

/**
 * What a user can sign in with (GET /users/{id}/auth_methods, types only), and the second
 * factors the login asks for. A one-time code factor counts only while its address or number
 * is verified: a code must go where the person proved to be.
 */
export const AUTH_METHODS = ["password", "passkey", "idp", "totp", "otp_email", "otp_sms", "recovery_codes"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** The second factors a login settings' `second_factors` can allow. */
export type SecondFactorType = FactorType;
export const SECOND_FACTORS: readonly SecondFactorType[] = ["totp", "otp_email", "otp_sms"];

/** A check of a second factor: one of the user's factors, or one of its recovery codes. */
export type SecondFactorCheck = SecondFactorType | "recovery_code";

/** The event names of a factor's changes (`user.<type>.added`, …): never a secret or code in the payload. */
export const FACTOR_EVENT: Record<FactorType, string> = { totp: "user.totp", otp_email: "user.otp_email", otp_sms: "user.otp_sms" };
