import type { LoginSettings } from "../../domain/settings/login.js";

/**
 * Authentication context classes (the ID token's `acr`, OpenID Connect Core 2): two levels,
 * derived from `amr` so that the login pages, account selection and FinalizeAuthRequest agree.
 * `amr` says how the person signed in; `acr` only how strongly:
 * - `urn:platform:acr:mfa`: two factors of different kinds (`amr` holds `mfa`: a password or
 *   an external login with a code or key, or a user-verified passkey);
 * - `urn:platform:acr:sfa`: one (a password, or an identity provider's word alone).
 * Discovery lists both (`acr_values_supported`).
 */
export const ACR_MFA = "urn:platform:acr:mfa";
const ACR_SFA = "urn:platform:acr:sfa";
export const ACR_VALUES = [ACR_SFA, ACR_MFA];

export const acrOf = (amr: readonly string[]): string => (amr.includes("mfa") ? ACR_MFA : ACR_SFA);

/**
 * Whether an authorization request's `acr_values` (voluntary, OpenID Connect Core 3.1.2.1)
 * accept only multi-factor: among the values we know, `mfa` and not `sfa`. Values we do not
 * know are ignored; only unknown ones ask for nothing.
 */
export function asksForMfa(params: { acr_values?: unknown }): boolean {
  const known = (typeof params.acr_values === "string" ? params.acr_values.split(" ") : []).filter((v) => ACR_VALUES.includes(v));
  return known.length > 0 && !known.includes(ACR_SFA);
}

/**
 * The login settings a sign-in follows: a request that accepts only multi-factor is served
 * as if the settings forced a second factor everywhere (the person's own is asked, or its
 * set-up as the settings allow it; after an external login too).
 */
export function withRequestedAcr(settings: LoginSettings, params: { acr_values?: unknown }): LoginSettings {
  return asksForMfa(params) ? { ...settings, forceMfa: true, forceMfaLocalOnly: false } : settings;
}
