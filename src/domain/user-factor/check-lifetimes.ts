import type { LoginSettings } from "../settings/login.js";
import { secondFactorChecked } from "./due.js";

/**
 * How long the checks of a sign-in count for single sign-on, by kind (the login settings'
 * lifetimes, as ZITADEL's login policy has them): the first factor by how it was made — a
 * password (`password_check_lifetime`), an identity provider
 * (`external_login_check_lifetime`), a passkey that is two factors in one
 * (`multi_factor_check_lifetime`) — and the second factor, a code or a security key
 * (`second_factor_check_lifetime`) or a passkey after a password (`multi_factor_check_lifetime`).
 * One rule for the login pages' single sign-on, their account chooser and FinalizeAuthRequest.
 */

/** When a sign-in's checks were made, in seconds since the epoch, and how (`amr`). */
export interface SignInChecks {
  amr: readonly string[];
  /** The first factor (password, external login, or a passkey alone). */
  firstAt: number;
  /** The second factor, when the sign-in had one. */
  secondAt?: number | undefined;
}

export function firstFactorLifetimeMs(settings: LoginSettings, amr: readonly string[]): number {
  if (amr.includes("pwd")) return settings.passwordCheckLifetimeMs;
  if (amr.includes("fed")) return settings.externalLoginCheckLifetimeMs;
  return settings.multiFactorCheckLifetimeMs;
}

export function secondFactorLifetimeMs(settings: LoginSettings, amr: readonly string[]): number {
  return amr.includes("user") ? settings.multiFactorCheckLifetimeMs : settings.secondFactorCheckLifetimeMs;
}

/** The first factors of a sign-in's `amr`: what still counts when only its second factor is asked again. */
export const firstFactors = (amr: readonly string[]): string[] => amr.filter((a) => a === "pwd" || a === "fed");

/** Whether a sign-in had a second factor after its password or external login (a passkey alone has none: its one check is both). */
export const hasSecondFactor = (amr: readonly string[]): boolean => firstFactors(amr).length > 0 && secondFactorChecked([...amr]);

/**
 * Which checks of a sign-in no longer count at `now` (seconds): `first` (the person signs in
 * again), `second` (its second factor is asked again where one is due; a sign-in without one
 * has none that counts).
 */
export function outlivedChecks(settings: LoginSettings, checks: SignInChecks, now: number): { first: boolean; second: boolean } {
  const first = now - checks.firstAt > firstFactorLifetimeMs(settings, checks.amr) / 1000;
  if (firstFactors(checks.amr).length === 0) return { first, second: first };
  const secondAt = hasSecondFactor(checks.amr) ? (checks.secondAt ?? checks.firstAt) : undefined;
  return { first, second: secondAt === undefined || now - secondAt > secondFactorLifetimeMs(settings, checks.amr) / 1000 };
}
