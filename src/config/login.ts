import { checkLoginUiUrl } from "../domain/settings/login.js";
import { ConfigError, integer } from "./env.js";

/** Guessing passwords on the login pages (docs/oidc.md). */
export interface LoginLimits {
  /** Failed passwords in a row that lock the user; 0 never locks. */
  maxPasswordAttempts: number;
  /** Password attempts per minute from one address, per process; 0: unlimited. */
  perIpPerMinute: number;
  /** Password attempts per minute at one login name, per process; 0: unlimited. */
  perLoginNamePerMinute: number;
  /** Checks per minute of one session of the session API, per process; 0: unlimited. */
  perSessionPerMinute: number;
  /** The system default of the login settings' login_ui_url; empty: the built-in pages. */
  loginUiUrl: string;
}

export function loginSettings(env: NodeJS.ProcessEnv): { login: LoginLimits } {
  return {
    login: {
      maxPasswordAttempts: integer(env, "PLATFORM_LOGIN_MAX_PASSWORD_ATTEMPTS", 10, 0, 1000),
      perIpPerMinute: integer(env, "PLATFORM_LOGIN_RATE_PER_IP", 60, 0, 1_000_000),
      perLoginNamePerMinute: integer(env, "PLATFORM_LOGIN_RATE_PER_LOGIN_NAME", 20, 0, 1_000_000),
      perSessionPerMinute: integer(env, "PLATFORM_SESSION_RATE_PER_SESSION", 10, 0, 1_000_000),
      loginUiUrl: loginUiUrl(env.PLATFORM_OIDC_LOGIN_UI_URL ?? ""),
    },
  };
}

/** The login settings' own rule for the URL, its refusal a ConfigError. */
function loginUiUrl(raw: string): string {
  try {
    return checkLoginUiUrl(raw, "PLATFORM_OIDC_LOGIN_UI_URL");
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
