import { join } from "node:path";
import { ConfigError, duration, TEN_YEARS_MS } from "./env.js";

/** What the first start writes for the first administrators (src/server/start.ts, src/cli/admin-token.ts). */
export interface BootstrapSettings {
  adminPatPath: string;
  /** Where bootstrap writes the first human administrator's invitation link (PLATFORM_ADMIN_INVITE_PATH). */
  adminInvitePath: string;
  /** That administrator's email address (PLATFORM_ADMIN_EMAIL; admin@ the external host by default). */
  adminEmail: string;
  /** Lifetime of the personal access token written at bootstrap. */
  bootstrapPatExpiresMs: number;
}

export function bootstrapSettings(env: NodeJS.ProcessEnv, dataDir: string, externalUrl: URL): BootstrapSettings {
  return {
    adminPatPath: env.PLATFORM_ADMIN_PAT_PATH || join(dataDir, "admin.pat"),
    adminInvitePath: env.PLATFORM_ADMIN_INVITE_PATH || join(dataDir, "admin-invite.url"),
    adminEmail: adminEmail(env.PLATFORM_ADMIN_EMAIL, externalUrl),
    bootstrapPatExpiresMs: duration(env, "PLATFORM_BOOTSTRAP_PAT_EXPIRES", "8760h", TEN_YEARS_MS),
  };
}

/** The first human administrator's address: given, or admin@ the external host. */
function adminEmail(given: string | undefined, externalUrl: URL): string {
  const email = given?.trim() || `admin@${externalUrl.hostname.replace(/^\[|\]$/g, "")}`;
  if (!/^[^\s@]{1,64}@[^\s@]{1,253}$/.test(email)) throw new ConfigError(`PLATFORM_ADMIN_EMAIL: "${email}" is not an email address`);
  return email;
}
