import { actionSettings } from "./actions.js";
import { auditSettings } from "./audit.js";
import { bootstrapSettings } from "./bootstrap.js";
import { brandingSettings } from "./branding.js";
import { databaseSettings } from "./database.js";
import { domainValidationSettings } from "./domain-validation.js";
import { ConfigError } from "./env.js";
import { externalLoginSettings } from "./external-login.js";
import { featureSettings } from "./features.js";
import { httpSettings } from "./http.js";
import { loginSettings } from "./login.js";
import { masterKeySetting } from "./master-key.js";
import { notificationSettings } from "./notifications.js";
import { oidcSettings } from "./oidc.js";
import { outboundSettings } from "./outbound.js";
import { passwordSettings } from "./passwords.js";
import { processSettings } from "./process.js";
import { telemetrySettings } from "./telemetry.js";
import { unknownLookupSettings } from "./unknown-lookups.js";
import { watchStreamSettings } from "./watch-streams.js";

export { ConfigError };

/** Everything the environment sets, each subsystem's part read by its own module of src/config/. */
export type Config = ReturnType<typeof loadConfig>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const listening = httpSettings(env);
  const running = processSettings(env);
  return {
    ...listening,
    ...running,
    ...masterKeySetting(env),
    ...databaseSettings(env, running.dataDir),
    ...bootstrapSettings(env, running.dataDir, listening.externalUrl),
    ...featureSettings(env),
    ...watchStreamSettings(env),
    ...auditSettings(env),
    ...telemetrySettings(env),
    ...passwordSettings(env),
    ...oidcSettings(env),
    ...loginSettings(env),
    ...unknownLookupSettings(env),
    ...outboundSettings(env),
    ...externalLoginSettings(env),
    ...actionSettings(env),
    ...notificationSettings(env),
    ...domainValidationSettings(env),
    ...brandingSettings(env),
  };
}
