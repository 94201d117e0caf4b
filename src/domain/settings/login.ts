import type { Db, Tx } from "../../store/eventstore.js";
import { invalidArgument } from "../errors.js";
import type { PropertyDefinition, SettingsKind } from "./kind.js";
import { resolveSettings } from "./store.js";

const EVERYWHERE = new Set(["system", "instance", "org"] as const);

/** Above this a lockout protects nobody; it is also the environment variable's bound. */
export const MAX_PASSWORD_ATTEMPTS_LIMIT = 1000;

/** What the login pages allow in an organization, and when they lock a user. */
export interface LoginSettings {
  allowRegister: boolean;
  allowUsernamePassword: boolean;
  allowExternalIdp: boolean;
  /** Wrong passwords in a row that lock a user; 0: never. */
  maxPasswordAttempts: number;
  /** Signing in needs a verified email address: the login pages ask for a code first. */
  requireVerifiedEmail: boolean;
}

/** The built-in default of the lockout threshold when no configured kind is at hand. */
const DEFAULT_MAX_PASSWORD_ATTEMPTS = 10;

/**
 * The login settings with the system default of the lockout threshold this process was
 * configured with (PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS); the other defaults are fixed:
 * registration off (an instance owner opts in, as in Keycloak), passwords and external
 * identity providers on.
 */
export function loginSettingsKind(defaults: { maxPasswordAttempts: number } = { maxPasswordAttempts: DEFAULT_MAX_PASSWORD_ATTEMPTS }): SettingsKind {
  const flag = (builtIn: boolean): PropertyDefinition => ({
    levels: EVERYWHERE,
    builtIn,
    check: (v) => {
      if (typeof v !== "boolean") throw invalidArgument("login settings flags are true or false");
    },
  });
  return {
    name: "login",
    properties: {
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
  };
}
