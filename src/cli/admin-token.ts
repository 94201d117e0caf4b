import { rename, writeFile } from "node:fs/promises";
import { ConfigError, loadConfig } from "../config/config.js";
import { issueAdminToken } from "../domain/instance/bootstrap.js";
import { DataDirInUse } from "../store/data-dir-lock.js";
import { openDataDir } from "../store/data-dir.js";
import { openStore } from "../store/database.js";
import { installOutbox } from "../actions/outbox.js";

/**
 * `npm run admin-token`: a new personal access token for the bootstrapped administrator,
 * written to PLATFORM_ADMIN_PAT_PATH (mode 0600), valid for PLATFORM_BOOTSTRAP_PAT_EXPIRES.
 * For when the first one expired or was lost. It needs the database itself, not the API:
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
      // Never a half-written token file: write aside, then move into place.
      const pending = `${config.adminPatPath}.${process.pid}.tmp`;
      await writeFile(pending, issued.token + "\n", { mode: 0o600 });
      await rename(pending, config.adminPatPath);
      process.stderr.write(`wrote a new token for platform-admin to ${config.adminPatPath}, valid until ${expiresAt.toISOString()}\n`);
      return 0;
    } finally {
      await store.close();
    }
  } finally {
    await dataDir?.release();
  }
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
