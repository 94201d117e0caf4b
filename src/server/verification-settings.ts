import type { Config } from "../config/config.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { VerificationSettings } from "../domain/user/code-messages.js";
import { CODE_PAGE_PATHS } from "../oidc/login/kit/code-links.js";

/** How codes are issued and where their links lead: for the API, the login pages, the bootstrap and `npm run admin-token` alike. */
export function verificationSettings(config: Config, box: SecretBox): VerificationSettings {
  return {
    box,
    codeTtlMs: config.notifications.codeTtlMs,
    messageMaxAgeMs: config.notifications.maxAgeMs,
    resetIntervalMs: config.notifications.resetIntervalMs,
    paths: CODE_PAGE_PATHS,
  };
}
