import { rename, writeFile } from "node:fs/promises";
import { ConfigError, loadConfig } from "../config/config.js";
import { resolveMasterKey } from "../config/master-key.js";
import { HUMAN_ADMIN_USERNAME, issueAdminLink, issueAdminToken } from "../domain/instance/bootstrap.js";
import { SecretBox } from "../crypto/encryption.js";
import { verificationSettings } from "../server/verification-settings.js";
import { DataDirInUse } from "../store/data-dir-lock.js";
import { openDataDir } from "../store/data-dir.js";
import { openStore } from "../store/database.js";
import { installOutbox } from "../engines/actions/outbox.js";

/**
 * `npm run admin-token`: a new personal access token for the bootstrapped administrator,
 * written to PLATFORM_ADMIN_PAT_PATH (mode 0600), valid for PLATFORM_BOOTSTRAP_PAT_EXPIRES;
 * and a new link for the first human administrator (an invitation, or a password reset once
 * a password is set) that leads on to the console, written to PLATFORM_ADMIN_INVITE_PATH.
 * For when the first ones expired or were lost. It needs the database itself, not the API:
 * whoever can read the database is the administrator anyway.
 */
async function main(): Promise<number> {
  const config = loadConfig();
  const embedded = config.database.kind === "pglite" && config.database.dataDir;
  const dataDir = embedded ? await openDataDir(config.dataDir) : undefined;
  try {
    installOutbox();
    const store = await openStore(config.database, config.db);
    try {
      const expiresAt = new Date(Date.now() + config.bootstrapPatExpiresMs);
      const issued = await issueAdminToken(store.db, expiresAt).catch((error: { code?: string }) => {
        // 42P01: no tables yet, the service never started on this database.
        if (error.code === "42P01") return undefined;
        throw error;
      });
      if (!issued) {
        process.stderr.write("no bootstrapped administrator in this database: start the service once first\n");
        return 1;
      }
      await writeAside(config.adminPatPath, issued.token);
      process.stderr.write(`wrote a new token for platform-admin to ${config.adminPatPath}, valid until ${expiresAt.toISOString()}\n`);
      const link = await issueAdminLink(store.db, verificationSettings(config, new SecretBox(await resolveMasterKey(config))));
      if (link) {
        const url = new URL(link.path, config.externalUrl).href;
        await writeAside(config.adminInvitePath, url);
        process.stderr.write(
          `wrote a new sign-in link for ${HUMAN_ADMIN_USERNAME} (choose a password, then the console) to ${config.adminInvitePath}:\n${url}\n`,
        );
      }
      return 0;
    } finally {
      await store.close();
    }
  } finally {
    await dataDir?.release();
  }
}

/** Never a half-written file: written aside (mode 0600), then moved into place. */
async function writeAside(path: string, secret: string): Promise<void> {
  const pending = `${path}.${process.pid}.tmp`;
  await writeFile(pending, secret + "\n", { mode: 0o600 });
  await rename(pending, path);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    if (error instanceof DataDirInUse) {
      process.stderr.write(`${error.message}\n(the embedded database serves one process: stop the service, run this, start it again)\n`);
      process.exit(1);
    }
    process.stderr.write(`admin-token failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
