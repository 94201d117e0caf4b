import type { Db, Tx } from "../../store/db.js";
import { invalidArgument } from "../errors.js";
import { MULTI_FACTORS, SECOND_FACTORS, type MultiFactorType, type SecondFactorType } from "../user-factor/model.js";
import type { PropertyDefinition, SettingsKind } from "./kind.js";
import { resolveSettings } from "./rows.js";

const EVERYWHERE = new Set(["system", "instance", "org"] as const);
const INSTANCE_AND_ABOVE = new Set(["system", "instance"] as const);

/** Above this a lockout protects nobody; it is also the environment variable's bound. */
const MAX_PASSWORD_ATTEMPTS_LIMIT = 1000;

/** What the login pages allow in an organization, and when they lock a user. */
export interface LoginSettings {
  allowRegister: boolean;
  allowUsernamePassword: boolean;
  allowExternalIdp: boolean;
  /** Wrong passwords in a row that lock a user; 0: never. */
  maxPasswordAttempts: number;
  /** Signing in needs a verified email address: the login pages ask for a code first. */
  requireVerifiedEmail: boolean;
  /** Every sign-in needs a second factor (`forceMfaLocalOnly`: only those with a password). */
  forceMfa: boolean;
  forceMfaLocalOnly: boolean;
  /** The second factors that may be used and set up. */
  secondFactors: SecondFactorType[];
  /** How long setting up a forced second factor may be put off; 0: not at all. */
  mfaInitSkipLifetimeMs: number;
  /** How long each kind of check counts for single sign-on (sign-in-lifetimes.ts). */
  secondFactorCheckLifetimeMs: number;
  passwordCheckLifetimeMs: number;
  externalLoginCheckLifetimeMs: number;
  multiFactorCheckLifetimeMs: number;
  /** A login UI of the product's own that authorization requests go to; empty: the built-in pages. */
  loginUiUrl: string;
  /** Whether a user-verified passkey signs someone in by itself. */
  passwordlessAllowed: boolean;
  /** The multi-factors (a user-verified passkey) that may be the step after a password. */
  multiFactors: MultiFactorType[];
}

/**
 * A login UI's address: an absolute https URL (http only on this machine, for development)
 * without a fragment; InvalidArgument naming `source` otherwise.
 */
export function checkLoginUiUrl(value: unknown, source: string): string {
  if (value === "") return "";
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    url = undefined;
  }
  const local = url?.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (typeof value !== "string" || !url || (url.protocol !== "https:" && !local) || url.hash) {
    throw invalidArgument(`${source}: "${String(value)}" is not an absolute https URL (http only on localhost) without a fragment`);
  }
  return value;
}

/** Whether a sign-in needs a second factor: `external` when an identity provider vouched for the person. */
export function mfaRequired(s: LoginSettings, external: boolean): boolean {
  return s.forceMfa && !(external && s.forceMfaLocalOnly);
}

const HOUR_MS = 3_600_000;
/** A year: the longest any lifetime may be. */
const MAX_LIFETIME_MS = 8760 * HOUR_MS;

/** The built-in default of the lockout threshold when no configured kind is at hand. */
const DEFAULT_MAX_PASSWORD_ATTEMPTS = 10;

/**
 * The login settings with the system defaults of the lockout threshold and of the login UI
 * this process was configured with (PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS,
 * PLATFORM_OIDC_LOGIN_UI_URL); the other defaults are fixed:
 * registration off (an instance owner opts in, as in Keycloak), passwords and external
 * identity providers on.
 */
export function loginSettingsKind(
  defaults: { maxPasswordAttempts: number; loginUiUrl?: string } = { maxPasswordAttempts: DEFAULT_MAX_PASSWORD_ATTEMPTS },
): SettingsKind {
  const flag = (builtIn: boolean): PropertyDefinition => ({
    levels: EVERYWHERE,
    builtIn,
    check: (v) => {
      if (typeof v !== "boolean") throw invalidArgument("login settings flags are true or false");
    },
  });
  const lifetime = (name: string, builtIn: number): PropertyDefinition => ({
    levels: EVERYWHERE,
    builtIn,
    check: (v) => {
      if (typeof v !== "number" || !Number.isInteger(v / 1000) || v < 0 || v > MAX_LIFETIME_MS) {
        throw invalidArgument(`${name}: give whole seconds from 0 to 8760h`);
      }
    },
  });
  return {
    name: "login",
    properties: {
      force_mfa: flag(false),
      force_mfa_local_only: flag(false),
      second_factors: {
        levels: EVERYWHERE,
        builtIn: [...SECOND_FACTORS],
        check: (v) => {
          if (!Array.isArray(v) || v.some((t) => !SECOND_FACTORS.includes(t)))
            throw invalidArgument(`second_factors: each is one of ${SECOND_FACTORS.join(", ")}`);
        },
      },
      passwordless_type: {
        levels: EVERYWHERE,
        builtIn: "allowed",
        check: (v) => {
          if (v !== "allowed" && v !== "not_allowed") throw invalidArgument("passwordless_type is ALLOWED or NOT_ALLOWED");
        },
      },
      multi_factors: {
        levels: EVERYWHERE,
        builtIn: [...MULTI_FACTORS],
        check: (v) => {
          if (!Array.isArray(v) || v.some((t) => !MULTI_FACTORS.includes(t)))
            throw invalidArgument(`multi_factors: each is one of ${MULTI_FACTORS.join(", ")}`);
        },
      },
      // Where every person of the instance is sent to type a password: the instance's to choose,
      // not an organization's (whose id anyone can put into an authorization request's scope).
      login_ui_url: { levels: INSTANCE_AND_ABOVE, builtIn: defaults.loginUiUrl ?? "", check: (v) => checkLoginUiUrl(v, "login_ui_url") },
      mfa_init_skip_lifetime: lifetime("mfa_init_skip_lifetime", 720 * HOUR_MS),
      second_factor_check_lifetime: lifetime("second_factor_check_lifetime", 18 * HOUR_MS),
      // The peers' defaults (ZITADEL's login policy): ten days for a first factor, twelve hours for a passkey.
      password_check_lifetime: lifetime("password_check_lifetime", 240 * HOUR_MS),
      external_login_check_lifetime: lifetime("external_login_check_lifetime", 240 * HOUR_MS),
      multi_factor_check_lifetime: lifetime("multi_factor_check_lifetime", 12 * HOUR_MS),
      allow_register: flag(false),
      allow_username_password: flag(true),
      allow_external_idp: flag(true),
      require_verified_email: flag(false),
      max_password_attempts: {
        levels: EVERYWHERE,
        builtIn: defaults.maxPasswordAttempts,
        check: (v) => {
          if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > MAX_PASSWORD_ATTEMPTS_LIMIT) {
            throw invalidArgument(`max_password_attempts: ${String(v)} is not between 0 (no lockout) and ${MAX_PASSWORD_ATTEMPTS_LIMIT}`);
          }
        },
      },
    },
  };
}

/** The kind with the built-in default threshold (10); see loginSettingsKind. */
export const LOGIN_SETTINGS = loginSettingsKind();

/**
 * The login settings in effect in an organization (org → instance → system → built-in).
 * For the login pages and the external login helpers: `allowExternalIdp` says whether
 * identity provider buttons may be shown, `allowUsernamePassword` whether the password
 * form may. Pass the process's configured kind (LoginContext.loginSettings) when the
 * lockout threshold matters: without it the system default is the built-in 10, not
 * PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS.
 */
export async function loginSettingsOf(db: Db | Tx, instanceId: string, orgId: string, kind: SettingsKind = LOGIN_SETTINGS): Promise<LoginSettings> {
  const { resolved } = await resolveSettings(db, kind, { type: "org", instanceId, orgId });
  return {
    allowRegister: resolved.allow_register!.value === true,
    allowUsernamePassword: resolved.allow_username_password!.value === true,
    allowExternalIdp: resolved.allow_external_idp!.value === true,
    maxPasswordAttempts: Number(resolved.max_password_attempts!.value),
    requireVerifiedEmail: resolved.require_verified_email!.value === true,
    forceMfa: resolved.force_mfa!.value === true,
    forceMfaLocalOnly: resolved.force_mfa_local_only!.value === true,
    secondFactors: resolved.second_factors!.value as SecondFactorType[],
    mfaInitSkipLifetimeMs: Number(resolved.mfa_init_skip_lifetime!.value),
    secondFactorCheckLifetimeMs: Number(resolved.second_factor_check_lifetime!.value),
    passwordCheckLifetimeMs: Number(resolved.password_check_lifetime!.value),
    externalLoginCheckLifetimeMs: Number(resolved.external_login_check_lifetime!.value),
    multiFactorCheckLifetimeMs: Number(resolved.multi_factor_check_lifetime!.value),
    loginUiUrl: String(resolved.login_ui_url!.value),
    passwordlessAllowed: resolved.passwordless_type!.value !== "not_allowed",
    multiFactors: resolved.multi_factors!.value as MultiFactorType[],
  };
}
